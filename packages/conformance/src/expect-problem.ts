/**
 * The assertion every conformance check makes of a refusal: an RFC 9457 problem response.
 * Test support only.
 * @module
 */
import { expect } from 'vitest';

const PROBLEM = /^application\/problem\+json(;|$)/;

/** Asserts a problem response and returns its body. */
export async function expectProblem(res: Response, status: number, code: string): Promise<Record<string, unknown>> {
  const text = await res.text();
  expect({ status: res.status, body: text }).toMatchObject({ status });
  expect(res.headers.get('content-type')).toMatch(PROBLEM);
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(body).toMatchObject({ status, code, type: expect.stringContaining(code), title: expect.any(String), detail: expect.any(String) });
  return body;
}
