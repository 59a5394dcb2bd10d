#!/usr/bin/env node
/**
 * @module e2e/node/git-http
 * A git smart-HTTP server that requires HTTP basic authentication, for the real-node suite's private repository
 * (git daemon cannot authenticate). Every request must carry the one user and password given; an authorised one
 * is handed to `git http-backend` as a CGI request (read-only: receive-pack is off, the tests push to the bare
 * repository on disk).
 *
 *   node git-http.mjs --listen ADDR:PORT --root DIR --user NAME --password-file FILE
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    listen: { type: 'string' },
    root: { type: 'string' },
    user: { type: 'string' },
    'password-file': { type: 'string' },
  },
});
const [host = '127.0.0.1', port = '0'] = (values.listen ?? '').split(':');
const expected = `Basic ${Buffer.from(`${values.user}:${readFileSync(values['password-file'] ?? '', 'utf8').trim()}`).toString('base64')}`;

const server = createServer((req, res) => {
  if (req.headers.authorization !== expected) {
    // git asks for credentials (and git-sync supplies them) only after a 401 with a Basic challenge.
    res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="e2e git"', 'Content-Type': 'text/plain' }).end('authentication required\n');
    req.resume();
    return;
  }
  const url = new URL(req.url ?? '/', 'http://git');
  const cgi = spawn('git', ['http-backend'], {
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      GIT_PROJECT_ROOT: values.root ?? '',
      GIT_HTTP_EXPORT_ALL: '1',
      GATEWAY_INTERFACE: 'CGI/1.1',
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      // http-backend inflates gzip request bodies itself when told the encoding.
      HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
      HTTP_GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
      REMOTE_USER: values.user ?? '',
      REMOTE_ADDR: req.socket.remoteAddress ?? '',
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  req.pipe(cgi.stdin);
  cgi.stdin.on('error', () => undefined); // http-backend may answer before reading the whole body
  // CGI output: header lines, a blank line, then the body, which is streamed through as it comes.
  let head = Buffer.alloc(0);
  let headersDone = false;
  cgi.stdout.on('data', (chunk) => {
    if (headersDone) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const text = head.toString('latin1');
    const crlf = text.indexOf('\r\n\r\n');
    const lf = text.indexOf('\n\n');
    const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf + 4 : lf >= 0 ? lf + 2 : -1;
    if (end < 0) return;
    headersDone = true;
    let status = 200;
    /** @type {Record<string, string>} */
    const headers = {};
    for (const line of text.slice(0, end).split(/\r?\n/)) {
      const i = line.indexOf(':');
      if (i <= 0) continue;
      const name = line.slice(0, i).trim();
      const value = line.slice(i + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 200;
      else headers[name] = value;
    }
    res.writeHead(status, headers);
    res.write(head.subarray(Buffer.byteLength(text.slice(0, end), 'latin1')));
  });
  cgi.stdout.on('end', () => {
    if (!headersDone) res.writeHead(502).end('git http-backend gave no headers\n');
    else res.end();
  });
});
server.listen(Number(port), host, () => {
  const a = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof a === 'object' && a ? a.port : 0 })}\n`);
});
