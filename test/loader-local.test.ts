import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LocalSource } from '../src/source/local-source.js';
import { openSource } from '../src/source/open-source.js';
import { S3Source } from '../src/source/s3-source.js';
import { describeSnapshotSourceContract } from './support/loader-suite.js';

describeSnapshotSourceContract(
  'LocalSource in a temp folder',
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pitcache-local-'));
    return { source: new LocalSource(dir), cleanup: () => rm(dir, { recursive: true, force: true }) };
  },
  { conditionalWrites: 'atomic' },
);

describe('openSource', () => {
  it('opens a path or a file:// URL as a LocalSource and s3:// as an S3Source', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pitcache-open-'));
    try {
      const byPath = openSource(dir);
      const byUrl = openSource(pathToFileURL(dir).href);
      expect(byPath).toBeInstanceOf(LocalSource);
      expect(byUrl).toBeInstanceOf(LocalSource);
      // Both name the same folder: what one writes, the other reads.
      await byPath.writeObject('p/d/manifest.json', new TextEncoder().encode('{}'));
      expect(await byUrl.listDatasets()).toEqual([{ productId: 'p', dataset: 'd' }]);

      const s3 = openSource('s3://bucket-name/some/prefix/', { endpoint: 'http://127.0.0.1:1', forcePathStyle: true });
      expect(s3).toBeInstanceOf(S3Source);
      expect(s3).toMatchObject({ bucket: 'bucket-name', prefix: 'some/prefix', description: 's3://bucket-name/some/prefix/' });
      (s3 as S3Source).close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a location that is neither', () => {
    expect(() => openSource('http://example.com/x')).toThrow(/unsupported scheme http/);
    expect(() => openSource('s3://')).toThrow(/bucket/);
  });
});
