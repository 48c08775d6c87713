/**
 * A kept-alive connection read one response at a time, to see what a server does with the
 * connection after an early answer. Test support only.
 * @module
 */
import { connect } from 'node:net';
import type { RawResponse } from './raw-send.ts';

/** One response read off a kept-alive socket, with whether the server then closed it. */
export interface KeptAliveResponse extends RawResponse {
  /** The socket ended (or was reset) after this response, before any more was sent. */
  closed: boolean;
}

/**
 * A socket to `origin` that stays open between requests, and reads one response at a time
 * (a `100 Continue` too).
 */
export function keptAlive(origin: string): Promise<{ write(text: string): void; read(): Promise<KeptAliveResponse>; ended(): Promise<boolean>; close(): void }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let data = Buffer.alloc(0);
    let ended = false;
    let wake: (() => void) | undefined;
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      wake?.();
    });
    const end = (): void => {
      ended = true;
      wake?.();
    };
    socket.on('end', end);
    socket.on('close', end);
    socket.on('error', end);
    const more = (): Promise<void> =>
      new Promise((ready, fail) => {
        if (ended) return fail(new Error('the server closed the connection before answering (a hang-up)'));
        const timer = setTimeout(() => fail(new Error('no answer within 5 s')), 5000);
        wake = () => {
          clearTimeout(timer);
          wake = undefined;
          ready();
        };
      });
    /** Reads one response, its body by Content-Length or chunks (none for a 1xx). */
    const read = async (): Promise<KeptAliveResponse> => {
      {
        let at = data.indexOf('\r\n\r\n');
        while (at === -1) {
          await more();
          at = data.indexOf('\r\n\r\n');
        }
        const [statusLine = '', ...lines] = data.subarray(0, at).toString('latin1').split('\r\n');
        data = data.subarray(at + 4);
        const status = Number(statusLine.split(' ')[1]);
        const headers: Record<string, string> = {};
        for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
        if (status < 200) return { status, headers, body: '', closed: ended };
        let body = '';
        if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
          for (;;) {
            let line = data.indexOf('\r\n');
            while (line === -1) {
              await more();
              line = data.indexOf('\r\n');
            }
            const size = parseInt(data.subarray(0, line).toString('latin1'), 16);
            while (data.length < line + 2 + size + 2) await more();
            body += data.subarray(line + 2, line + 2 + size).toString('utf8');
            data = data.subarray(line + 2 + size + 2);
            if (size === 0) break;
          }
        } else {
          const length = Number(headers['content-length'] ?? '0');
          while (data.length < length) await more();
          body = data.subarray(0, length).toString('utf8');
          data = data.subarray(length);
        }
        return { status, headers, body, closed: ended };
      }
    };
    const endedSoon = async (): Promise<boolean> => {
      for (let i = 0; i < 200 && !ended; i += 1) await new Promise((wait) => setTimeout(wait, 10));
      return ended;
    };
    socket.once('connect', () => resolve({ write: (text) => socket.write(text), read, ended: endedSoon, close: () => socket.destroy() }));
    socket.once('error', reject);
  });
}
