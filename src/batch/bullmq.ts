/**
 * Loads BullMQ and its Redis client ioredis, the optional peer dependencies of the queue
 * (`enqueueBatch`, `runWorker`). Internal: no public declaration names a BullMQ type, so
 * `rxvoice/batch` type-checks and loads where neither package is installed.
 *
 * @internal
 */
import { QueueUnavailableError } from './errors.js';

/** The BullMQ module, as the queue uses it. */
export type BullMq = typeof import('bullmq');

/**
 * Import BullMQ, then check that ioredis is there too (BullMQ 6 loads it lazily and would
 * fail later, mid-run). Rejects with {@link QueueUnavailableError} naming the package that
 * is not installed. The specifiers are parameters for tests only.
 */
export async function loadBullmq(specifier = 'bullmq', redisClient = 'ioredis'): Promise<BullMq> {
  const bullmq = (await loadOptional(specifier)) as BullMq;
  await loadOptional(redisClient);
  return bullmq;
}

async function loadOptional(specifier: string): Promise<unknown> {
  try {
    return await import(specifier);
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    // the package itself is missing (not one of its own dependencies, which is another fault)
    const missing = (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && message.includes(`'${specifier}'`);
    if (missing) throw new QueueUnavailableError(specifier, { cause: error });
    throw error;
  }
}
