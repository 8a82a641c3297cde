// A small piece of a real test suite: servers on loopback and clients that
// talk to them. Each tN.test.js runs it, so that node --test spreads the
// same work over six worker processes.
const test = require('node:test');
const assert = require('node:assert');
const http = require('node:http');
const net = require('node:net');

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

test('http round trips', async () => {
  const server = http.createServer((req, res) => res.end('ok ' + req.url));
  const port = await listen(server);
  for (let i = 0; i < 200; i++) {
    const body = await new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/' + i, agent: false }, (res) => {
        let data = '';
        res.on('data', (c) => (data += c));
        res.on('end', () => resolve(data));
      }).on('error', reject);
    });
    assert.strictEqual(body, 'ok /' + i);
  }
  server.close();
});

test('tcp echo', async () => {
  const server = net.createServer((s) => s.pipe(s));
  const port = await listen(server);
  for (let i = 0; i < 200; i++) {
    const got = await new Promise((resolve, reject) => {
      const c = net.connect(port, '127.0.0.1', () => c.end('ping' + i));
      let data = '';
      c.on('data', (d) => (data += d));
      c.on('end', () => resolve(data));
      c.on('error', reject);
    });
    assert.strictEqual(got, 'ping' + i);
  }
  server.close();
});

test('some computation', () => {
  let x = 0;
  for (let i = 0; i < 2e6; i++) x = (x * 31 + i) % 1000003;
  assert.ok(x >= 0);
});
