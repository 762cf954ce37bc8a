/**
 * Whether a merged list's untouched stretches could be written by reference (not a test, not a bench
 * case): 30 MiB to a loopback socket in this process (both ends counted), either (copy) 3 KiB items copied
 * into 256 KiB pieces, a write each, or (ref) each item as 4 views of its bytes (what a pod's edits leave
 * between them), corked per 85 items. CPU ms per MiB over 20 answers after 5:
 *   node bench/lib/refwrite-proto.mjs copy; node bench/lib/refwrite-proto.mjs ref
 */
import net from 'node:net';

const ITEM = 3072,
  ITEMS = 10000;
const src = new Uint8Array(ITEM * 64).fill(0x61);
const mode = process.argv[2];
const srv = net.createServer((s) => {
  s.on('data', () => {});
});
await new Promise((r) => srv.listen(0, '127.0.0.1', r));
const sock = net.connect(srv.address().port, '127.0.0.1');
await new Promise((r) => sock.once('connect', r));
const drain = () => new Promise((r) => sock.once('drain', r));
async function once() {
  if (mode === 'copy') {
    let piece = new Uint8Array(256 * 1024),
      at = 0;
    for (let i = 0; i < ITEMS; i++) {
      if (at + ITEM > piece.length) {
        if (!sock.write(piece.subarray(0, at))) await drain();
        piece = new Uint8Array(256 * 1024);
        at = 0;
      }
      const o = (i % 64) * ITEM;
      piece.set(src.subarray(o, o + ITEM), at);
      at += ITEM;
    }
    if (!sock.write(piece.subarray(0, at))) await drain();
  } else {
    sock.cork();
    let n = 0;
    for (let i = 0; i < ITEMS; i++) {
      const o = (i % 64) * ITEM;
      sock.write(src.subarray(o, o + 600));
      sock.write(src.subarray(o + 600, o + 610));
      sock.write(src.subarray(o + 610, o + 1500));
      sock.write(src.subarray(o + 1500, o + ITEM));
      if (++n === 85) {
        n = 0;
        sock.uncork();
        if (sock.writableLength > 1 << 20) await drain();
        sock.cork();
      }
    }
    sock.uncork();
    if (sock.writableLength) await drain();
  }
}
for (let i = 0; i < 5; i++) await once();
const t = process.cpuUsage();
for (let i = 0; i < 20; i++) await once();
const u = process.cpuUsage(t);
console.log(
  mode,
  ((u.user + u.system) / 1000 / ((20 * ITEM * ITEMS) / 2 ** 20)).toFixed(3),
  'ms CPU per MiB (both ends in this process)',
);
process.exit(0);
