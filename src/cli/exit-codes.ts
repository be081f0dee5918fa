/**
 * Exit codes of the `rxvoice` command, and the mapping from errors to a code and one
 * line of text. The line never carries the API key (it is scrubbed with `redact`).
 */
import {
  AbortError,
  AuthenticationError,
  ConnectionError,
  CreditsExhaustedError,
  LiveSessionError,
  PaymentRequiredError,
  RateLimitError,
  RxVoiceError,
  SessionRejectedError,
  TimeoutError,
  ValidationError,
  redact,
} from '../core/errors.js';

/** Exit codes, documented in `rxvoice --help`. */
export const ExitCode = {
  /** Success. */
  ok: 0,
  /** Any other failure (service error, task failed, file error, ...). */
  failure: 1,
  /** Bad command line: unknown command or option, missing argument. */
  usage: 2,
  /** API key missing, invalid or refused (HTTP 401/403, live close 4401). */
  auth: 3,
  /** The request was invalid (checked locally, or HTTP 422, or live close 4400). */
  validation: 4,
  /** Not enough credits (task PAYMENT_REQUIRED, live close 4402). */
  payment: 5,
  /** The service could not be reached, timed out or rate-limited us. */
  connection: 6,
  /** Interrupted by SIGINT/SIGTERM. */
  interrupted: 130,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** The exit-code table as printed by `rxvoice --help`. */
export const EXIT_CODES_HELP = `Exit codes:
  0    success
  1    failure (service error, task failed, file error)
  2    usage error (unknown command or option, missing argument)
  3    authentication (API key missing, invalid or refused)
  4    validation (request rejected locally or by the service: 422, live 4400)
  5    payment (credits exhausted: PAYMENT_REQUIRED, live 4402)
  6    connection (service unreachable, timeout, rate limited)
  130  interrupted (SIGINT/SIGTERM)`;

/** A bad command line; exits with code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
  /** The command whose help the user should read (e.g. `speak`), if any. */
  readonly command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

/** Exit code for an error thrown by a command. */
export function exitCodeOf(error: unknown): ExitCodeValue {
  if (error instanceof UsageError) return ExitCode.usage;
  // a live session ended by its text source (stdin, a translation): the source's error decides
  if (error instanceof LiveSessionError && error.code === 'text_source') return exitCodeOf(error.cause);
  if (error instanceof AuthenticationError) return ExitCode.auth;
  if (error instanceof ValidationError || error instanceof SessionRejectedError) return ExitCode.validation;
  if (error instanceof PaymentRequiredError || error instanceof CreditsExhaustedError) return ExitCode.payment;
  if (error instanceof AbortError) return ExitCode.interrupted;
  if (error instanceof ConnectionError || error instanceof TimeoutError || error instanceof RateLimitError) {
    return ExitCode.connection;
  }
  if (error instanceof RxVoiceError) {
    switch (error.code) {
      case 'authentication':
        return ExitCode.auth;
      case 'validation':
      case 'session_rejected':
        return ExitCode.validation;
      case 'payment_required':
      case 'credits_exhausted':
        return ExitCode.payment;
      case 'connection':
      case 'timeout':
      case 'rate_limit':
        return ExitCode.connection;
      case 'abort':
        return ExitCode.interrupted;
      default:
        return ExitCode.failure;
    }
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ECONNRESET' || code === 'ETIMEDOUT') {
    return ExitCode.connection;
  }
  return ExitCode.failure;
}

/**
 * One line describing `error`, with the service's message, prefixed `rxvoice: `, the
 * secrets scrubbed and newlines folded so the message stays on one line.
 */
export function errorLine(error: unknown, secrets: ReadonlyArray<string | undefined>): string {
  let message: string;
  if (error instanceof UsageError) {
    const hint = error.command ? ` (see: rxvoice ${error.command} --help)` : ' (see: rxvoice --help)';
    message = `${error.message}${hint}`;
  } else if (error instanceof Error) {
    const kind = error instanceof RxVoiceError ? `${error.name}: ` : '';
    message = `${kind}${error.message}`;
    const unspoken = error instanceof LiveSessionError ? error.unspoken : undefined;
    if (unspoken) message += ` [unspoken: ${JSON.stringify(truncate(unspoken, 80))}]`;
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error && cause.message && !message.includes(cause.message) && !(error instanceof RxVoiceError && error.code === 'validation')) {
      message += ` (${cause.message})`;
    }
  } else {
    message = String(error);
  }
  const oneLine = message.replace(/\s*[\r\n]+\s*/g, ' ').trim();
  return `rxvoice: ${redact(oneLine, secrets)}`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
