/**
 * Publishes generations with the built `pitcache publish`, as ops would: the object, then
 * the manifest (and the history manifest, contract 12), straight into s3rver.
 */
import { cliPath } from '../../bench/lib/paths.js';
import type { Children } from './children.js';
import { exitOf, tail } from './children.js';
import { writeInput, type ClusterDataset, idOf } from './generations.js';
import { S3_ENV, type S3Store } from './s3-store.js';

export class Publisher {
  private readonly published = new Map<string, number>();

  constructor(
    private readonly children: Children,
    private readonly s3: S3Store,
    /** `s3://bucket/prefix` the replicas serve */
    readonly source: string,
    private readonly inputDir: string,
  ) {}

  /** Publishes generation g of `d` (g must follow the last one); resolves when the command has exited 0. */
  async publish(d: ClusterDataset, g: number): Promise<void> {
    const last = this.published.get(idOf(d)) ?? 0;
    if (g !== last + 1) throw new Error(`publish ${idOf(d)}: generation ${g} after ${last}`);
    const argv = [
      process.execPath,
      cliPath(),
      'publish',
      '--source',
      this.source,
      '--product',
      d.productId,
      '--dataset',
      d.dataset,
      '--input',
      writeInput(this.inputDir, d, g),
      ...this.s3.cliFlags(),
      // s3rver ignores If-Match / If-None-Match on PUT.
      '--s3-emulate-conditions',
      ...(g === 1 && d.keyColumn !== null ? ['--series-key', d.keyColumn] : []),
    ];
    const child = this.children.spawn(argv, { env: { ...process.env, ...S3_ENV } });
    const output = tail(child);
    const { code, signal } = await exitOf(child);
    if (code !== 0) throw new Error(`pitcache publish ${idOf(d)} generation ${g} exited ${code ?? signal}:\n${output()}`);
    const printed = output();
    if (!printed.includes(`generation ${g}`)) throw new Error(`pitcache publish ${idOf(d)}: expected generation ${g}, printed: ${printed}`);
    this.published.set(idOf(d), g);
  }
}
