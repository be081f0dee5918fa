/**
 * Building blocks of the option schemas of operators, sinks and sources (written with
 * `zod/mini`, which keeps browser bundles small; messages are given here, so they read
 * the same whether or not the full `zod` with its English messages is loaded). Checked
 * with `checkOptions` when the operator is created.
 */
import * as z from 'zod/mini';
import type { SchedulerLike } from 'rxjs';

/** A duration in milliseconds: a finite number >= 0. */
export const milliseconds = () =>
  z.number({ error: 'must be a finite number of milliseconds' }).check(z.minimum(0, { error: 'must be >= 0 ms' }));

/** A duration in milliseconds: a finite number > 0. */
export const positiveMilliseconds = () =>
  z.number({ error: 'must be a finite number of milliseconds' }).check(z.positive({ error: 'must be > 0 ms' }));

/** A whole number at least `min`. */
export const integerAtLeast = (min: number) =>
  z.int({ error: 'must be an integer' }).check(z.minimum(min, { error: `must be an integer >= ${min}` }));

/** A flag. */
export const flag = () => z.boolean({ error: 'must be true or false' });

/** Any function (its signature is the type's business). */
export const func = <F>() => z.custom<F>((value) => typeof value === 'function', { error: 'must be a function' });

/** An RxJS scheduler (`now()` and `schedule()`). */
export const scheduler = () =>
  z.custom<SchedulerLike>(
    (value) =>
      value !== null &&
      typeof value === 'object' &&
      typeof (value as SchedulerLike).now === 'function' &&
      typeof (value as SchedulerLike).schedule === 'function',
    { error: 'must be an RxJS scheduler' },
  );


