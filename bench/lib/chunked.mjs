/**
 * A chunked transfer-coding reader for the floor proxies' raw-socket clients (./floor-proxy.mjs,
 * ./floor-watch.mjs): `feed(bytes)` hands each piece of chunk data to `onData` as a view of the bytes given
 * (valid during the call only), calls `onEnd()` after the last chunk's trailer and `onBad(text)` on a size
 * line that is not one; nothing is fed after either.
 */
export function chunkedReader(onData, onEnd, onBad) {
  let state = 'size'; // 'size' line, 'data', 'crlf' after data, 'trailer' lines
  let chunkLeft = 0; // bytes of the current chunk left
  let line = ''; // a size or trailer line split across reads
  return (b) => {
    let i = 0;
    while (i < b.length) {
      if (state === 'data') {
        const n = Math.min(chunkLeft, b.length - i);
        onData(b.subarray(i, i + n));
        i += n;
        chunkLeft -= n;
        if (chunkLeft === 0) state = 'crlf';
        continue;
      }
      const nl = b.indexOf(10, i);
      if (nl < 0) {
        line += b.latin1Slice(i, b.length);
        return;
      }
      line += b.latin1Slice(i, nl);
      i = nl + 1;
      const text = line.trim();
      line = '';
      if (state === 'crlf') state = 'size';
      else if (state === 'size') {
        chunkLeft = Number.parseInt(text, 16);
        if (!(chunkLeft >= 0)) return onBad(text);
        state = chunkLeft === 0 ? 'trailer' : 'data';
      } else if (text === '') return onEnd();
    }
  };
}
