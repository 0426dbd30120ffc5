import { describe, expect, it } from 'vitest';
import { freePort } from '../bench/lib/proc.js';

describe('freePort (bench and cluster harness)', () => {
  it('never hands out the same port twice in one process, though the kernel may offer it again', async () => {
    // Replicas, their metrics listeners, HAProxy and Prometheus each get one: uWS binds with
    // SO_REUSEPORT, so a repeated port would silently split one server's connections with another's.
    const ports: number[] = [];
    for (let i = 0; i < 300; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const p of ports) expect(p).toBeGreaterThan(0);
  });
});
