import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 the OS just handed out (bound once and released); free unless someone grabs it in the next instant. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((done, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}
