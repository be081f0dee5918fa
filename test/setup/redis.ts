/**
 * A real redis-server for a suite: started on a free port in a directory of the suite's
 * (no persistence), ready when it answers PING. Pair with `requireTool('redis-server', ...)`.
 *
 * ```ts
 * const REDIS = requireTool('redis-server', 'my suite');
 * const redis = await startRedis(REDIS!, dir); // redis.url: redis://127.0.0.1:<port>
 * await redis.stop();
 * ```
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { probeRedis } from '../../src/batch/index.js';

/** A port nobody listens on now (listen on 0, read it, close). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A running redis-server: its address, its process id (to stop it with SIGSTOP, say) and how to stop it. */
export interface RedisServer {
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `redis-server` (path `binary`) on a free port (or `port`: a restart on the same
 * address), working in `dir`; resolves once it answers.
 */
export async function startRedis(binary: string, dir: string, port?: number): Promise<RedisServer> {
  port ??= await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let i = 0; ; i++) {
    try {
      await probeRedis(url, 500);
      break;
    } catch (error) {
      if (i > 50) {
        child.kill('SIGKILL');
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    url,
    port,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
