/** Why the shared HTTP server could not listen, naming the setting to change. */
export function listenProblem(err: NodeJS.ErrnoException, http: { host: string; port: number }): Error {
  const where = `${http.host}:${http.port}`;
  switch (err.code) {
    case 'EADDRINUSE':
      return new Error(
        `port ${http.port} on ${http.host} is already in use by another program: set HTTP_PORT to a free port (for example HTTP_PORT=${http.port + 1}), or stop the other program`,
      );
    case 'EACCES':
      return new Error(`this user may not listen on ${where} (ports below 1024 need privileges): set HTTP_PORT to 1024 or higher`);
    case 'EADDRNOTAVAIL':
      return new Error(`HTTP_HOST=${http.host} is not an address of this machine: use 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new Error(`HTTP_HOST=${http.host} does not resolve to an address: use 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)`);
    default:
      return err;
  }
}
