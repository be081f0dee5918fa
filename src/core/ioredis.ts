import { RxVoiceError } from './errors.js';

/** The `ioredis` constructor as the Redis stores use it (their own connection type `T`). */
export type IoredisConstructor<T> = new (address: string, options: Record<string, unknown>) => T;

/**
 * Load the optional peer `ioredis` on first use, for `user` (the store that needs it, named
 * in the error): a missing package is a `config` error that says what to install.
 */
export async function loadIoredis<T>(user: string): Promise<IoredisConstructor<T>> {
  const specifier = 'ioredis';
  try {
    const module = (await import(specifier)) as { default?: unknown; Redis?: unknown };
    return (module.Redis ?? module.default) as IoredisConstructor<T>;
  } catch (error) {
    throw new RxVoiceError('config', `${user} with an address needs the optional package ioredis (npm install ioredis)`, { cause: error });
  }
}
