import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/time/clock.js';
import { ManualTimers } from '../src/time/manual-timers.js';
import { sleep } from '../src/time/timers.js';

describe('ManualTimers', () => {
  it('advance fires what falls due, in due order (ties in the order set), with the clock at each due time', () => {
    const timers = new ManualTimers(new ManualClock(1000));
    const fired: Array<[string, number]> = [];
    const at = (name: string) => () => fired.push([name, timers.clock.now()]);
    timers.setTimeout(at('c'), 30);
    timers.setTimeout(at('a'), 10);
    timers.setTimeout(at('b'), 10);
    const cleared = timers.setTimeout(at('x'), 5);
    timers.clearTimeout(cleared);
    timers.advance(29);
    expect(fired).toEqual([
      ['a', 1010],
      ['b', 1010],
    ]);
    expect(timers.clock.now()).toBe(1029);
    expect(timers.nextDue()).toBe(1030);
    timers.advance(1);
    expect(fired.at(-1)).toEqual(['c', 1030]);
    expect(timers.size).toBe(0);
    expect(timers.requested).toEqual([30, 10, 10, 5]);
  });

  it('a timer set while advancing fires in the same advance when it falls due', () => {
    const timers = new ManualTimers(new ManualClock(0));
    const fired: number[] = [];
    timers.setTimeout(() => {
      fired.push(timers.clock.now());
      timers.setTimeout(() => fired.push(timers.clock.now()), 10);
    }, 10);
    timers.advance(25);
    expect(fired).toEqual([10, 20]);
  });

  it('fire moves the clock to the earliest timer; with none it throws', () => {
    const timers = new ManualTimers(new ManualClock(0));
    let done = false;
    timers.setTimeout(() => (done = true), 500);
    timers.fire();
    expect(done).toBe(true);
    expect(timers.clock.now()).toBe(500);
    expect(() => timers.fire()).toThrow('no timer to fire');
  });

  it('armed resolves when a timer is set, and fails after its bound when none is', async () => {
    const timers = new ManualTimers(new ManualClock(0));
    const waiting = timers.armed('x', 1000);
    const slept = sleep(timers, 50);
    await waiting;
    timers.advance(50);
    await slept;
    await expect(new ManualTimers(new ManualClock(0)).armed('a timer that never comes', 10)).rejects.toThrow('waited 10 ms for a timer that never comes');
  });
});
