/**
 * Errors thrown by the paginator. The server's RFC 9457 problem, when it sent one,
 * is kept on the error; the API key never is.
 * @module
 */

/** The server answered with a non-success status. */
export class PaginationHttpError extends Error {
  readonly status: number;
  /** The parsed `application/problem+json` body, when there was one. */
  readonly problem: Record<string, unknown> | undefined;
  readonly url: string;

  constructor(status: number, url: string, problem: Record<string, unknown> | undefined) {
    const code = typeof problem?.code === 'string' ? ` (${problem.code})` : '';
    super(`GET ${url} answered ${status}${code}`);
    this.name = 'PaginationHttpError';
    this.status = status;
    this.problem = problem;
    this.url = url;
  }
}

/** The server pointed back at a page already read: following it would loop forever. */
export class PaginationCycleError extends Error {
  readonly url: string;

  constructor(url: string) {
    super(`pagination cycle: ${url} was already fetched`);
    this.name = 'PaginationCycleError';
    this.url = url;
  }
}

/** The response was not a page envelope (`{ items: [...] }`). */
export class PaginationFormatError extends Error {
  readonly url: string;

  constructor(url: string, detail: string) {
    super(`GET ${url}: ${detail}`);
    this.name = 'PaginationFormatError';
    this.url = url;
  }
}
