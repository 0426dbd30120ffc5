import { describe, expect, it } from 'vitest';
import { parseStoreLocation } from '../src/source/location.js';

describe('parseStoreLocation', () => {
  it('reads s3://bucket/prefix without edge slashes', () => {
    expect(parseStoreLocation('s3://snaps/prod/v1/')).toEqual({ kind: 's3', bucket: 'snaps', path: 'prod/v1' });
    expect(parseStoreLocation('s3://snaps')).toEqual({ kind: 's3', bucket: 'snaps', path: '' });
  });

  it('reads file:///abs/dir as its path and a plain path as is', () => {
    expect(parseStoreLocation('file:///abs/dir%20x')).toEqual({ kind: 'local', path: '/abs/dir x' });
    expect(parseStoreLocation('data/snaps')).toEqual({ kind: 'local', path: 'data/snaps' });
    expect(parseStoreLocation('/abs')).toEqual({ kind: 'local', path: '/abs' });
  });

  it('refuses an empty text, a bucketless s3 URL, a file URL with a host, other schemes and upper-case schemes', () => {
    for (const bad of ['', 's3://', 's3:///x', 'file://', 'file://host/x', 'http://x/y', 'S3://b/p', 'a\0b']) {
      expect(typeof parseStoreLocation(bad), bad).toBe('string');
    }
  });
});
