/**
 * A request with full control of the request line and `Host` header, which `fetch` does
 * not allow. Test support only.
 * @module
 */
import { connect } from 'node:net';

/** Sends `GET <target>` with `headers` over a fresh socket; resolves status, headers and body. */
export function rawRequest(
  origin: string,
  target: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      const lines = [`GET ${target} HTTP/1.1`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), 'connection: close', '', ''];
      socket.end(lines.join('\r\n'));
    });
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head = '', ...rest] = data.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const parsed: Record<string, string> = {};
      for (const line of headerLines) {
        const at = line.indexOf(':');
        parsed[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers: parsed, body: rest.join('\r\n\r\n') });
    });
  });
}
