/**
 * A finite answer made piece by piece (a merged list's 256 KiB pieces): a Web body any reader can take,
 * and, for a server that writes pieces itself (the Node one, deploy/node/http.ts), the generator behind
 * it, read without the Web stream's pull, enqueue and read per piece. Web APIs only (workerd reads the
 * Web body).
 */

export interface Pieces {
  pieces: AsyncGenerator<Uint8Array>;
  /** what the body's maker says of a failure mid-body (before the broken body is the only signal left) */
  failed(err: unknown): void;
}

const behind = new WeakMap<ReadableStream<Uint8Array>, Pieces>();

/**
 * The Web body of `pieces`: nothing is made before its first read (highWaterMark 0), so a server that
 * takes the generator ({@link takePieces}) finds every piece still to come.
 */
export function piecesBody(
  pieces: AsyncGenerator<Uint8Array>,
  failed: (err: unknown) => void,
): ReadableStream<Uint8Array> {
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        behind.delete(body);
        try {
          const r = await pieces.next();
          if (r.done) controller.close();
          else controller.enqueue(r.value);
        } catch (err) {
          failed(err);
          controller.error(err);
        }
      },
      async cancel() {
        behind.delete(body);
        await pieces.return(undefined);
      },
    },
    { highWaterMark: 0 },
  );
  behind.set(body, { pieces, failed });
  return body;
}

/** The generator behind a body made by {@link piecesBody}, once, if nobody has read the body yet. */
export function takePieces(body: ReadableStream<Uint8Array>): Pieces | undefined {
  const p = behind.get(body);
  if (!p || body.locked) return undefined;
  behind.delete(body);
  return p;
}
