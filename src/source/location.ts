import { fileURLToPath } from 'node:url';

/**
 * A place the server reads from (snapshot source, keys file): `s3://bucket/path`,
 * `file:///abs/path` or a plain filesystem path. The config keeps the operator's text
 * (the readers take it as is); this is the one check that the text is one of the three.
 */
export type StoreLocation =
  | { readonly kind: 's3'; readonly bucket: string; /** No leading or trailing `/`; may be empty. */ readonly path: string }
  | { readonly kind: 'local'; readonly path: string };

const SCHEME_RE = /^([a-z][a-z0-9+.-]*):\/\//i;
const BUCKET_RE = /^[a-z0-9][a-z0-9._-]*$/i;

/** The location, or a reason (a phrase for "--x: <reason>") when the text is not one. */
export function parseStoreLocation(text: string): StoreLocation | string {
  if (text === '') return 'must not be empty';
  if (text.includes('\0')) return 'must not contain a NUL character';
  const scheme = SCHEME_RE.exec(text)?.[1];
  if (scheme === undefined) return { kind: 'local', path: text };
  // The readers match `s3://` and `file://` as written; `FILE://` would be read as a path.
  if (scheme !== scheme.toLowerCase()) return `must write the scheme in lower case (${scheme.toLowerCase()}://)`;
  if (scheme === 's3') {
    const rest = text.slice('s3://'.length);
    const slash = rest.indexOf('/');
    const bucket = slash === -1 ? rest : rest.slice(0, slash);
    if (!BUCKET_RE.test(bucket)) return 'must name a bucket: s3://bucket/prefix';
    const path = slash === -1 ? '' : rest.slice(slash + 1).replace(/^\/+|\/+$/g, '');
    return { kind: 's3', bucket, path };
  }
  if (scheme === 'file') {
    if (text === 'file://') return 'must be a file URL with an absolute path: file:///abs/dir';
    try {
      return { kind: 'local', path: fileURLToPath(text) };
    } catch {
      return 'must be a file URL with an absolute path and no host: file:///abs/dir';
    }
  }
  return `has an unsupported scheme ${scheme}://; use s3://bucket/prefix, file:///abs/dir or a path`;
}
