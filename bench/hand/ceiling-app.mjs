/* global Buffer */
// The ceiling in this process: uWS answering every request with one fixed JSON-looking body
// of `bytes` (as bench/servers/ceiling-server.ts does, without its /metrics route), reading
// nothing. Shared by transport-floor.mjs and budget.mjs. Resolves to a close function.
export async function listenCeiling(root, bytes, port) {
  const { loadNativeUws } = await import(`${root}/dist/src/http/native-uws.js`);
  const body = Buffer.alloc(bytes, 0x20);
  body[0] = 0x7b;
  body[bytes - 1] = 0x7d;
  const app = loadNativeUws()
    .App()
    .any('/*', (res) => {
      res.cork(() => {
        res.writeHeader('content-type', 'application/json').end(body);
      });
    });
  await new Promise((ok, fail) => app.listen('127.0.0.1', port, (t) => (t ? ok() : fail(new Error(`cannot listen on 127.0.0.1:${port}`)))));
  return () => app.close();
}
