/**
 * The floor of a merged list on workerd (not a test, not a bench case), as ./floor-proxy.mjs is on Node: a
 * worker that reads the ten canned clusters' bodies (FLEET_CONFIG's members, one after another) and
 * answers their bytes concatenated, no scan, no relay. `make(mode)`: `native` pipes each body through an
 * IdentityTransformStream (no JavaScript per chunk), `js` reads each chunk in JavaScript and enqueues it
 * into a ReadableStream of its own (the least a fleet written over web streams pays per chunk; workerd
reads 4 KiB a chunk), `bulk` the same 64 KiB a read (workerd's BYOB `readAtLeast`). Run it
 * beside the fleet's bundle with ./workerd-ab.ts; `GET /chunks` answers the upstream chunk sizes seen.
 */
import { WorkerEntrypoint } from 'cloudflare:workers';

/** unused: ./workerd-ab.ts binds every bundle's FLEET_RELAY to this entrypoint */
export class FleetRelay extends WorkerEntrypoint {
  fetch() {
    return new Response('no relay in the floor', { status: 404 });
  }
}

export function make(mode) {
  return {
    async fetch(request, env) {
      const cfg = JSON.parse(env.FLEET_CONFIG);
      const members = cfg.members.clusters;
      const path = new URL(request.url).pathname;
      const ask = (m) =>
        fetch(`${m.server}/api/v1/pods`, {
          headers: { accept: 'application/json', authorization: `Bearer ${m.token}` },
        });
      if (path === '/chunks') {
        const sizes = [];
        for (const m of members) {
          // ?min=&room=: a BYOB readAtLeast(min, room bytes) instead of a default reader
          const q = new URL(request.url).searchParams;
          const min = Number(q.get('min') ?? 0);
          const body = (await ask(m)).body;
          const r = min ? body.getReader({ mode: 'byob' }) : body.getReader();
          for (;;) {
            const { value, done } = min
              ? await r.readAtLeast(min, new Uint8Array(Number(q.get('room') ?? 65536)))
              : await r.read();
            if (value?.length) sizes.push(value.byteLength);
            if (done) break;
          }
        }
        sizes.sort((a, b) => a - b);
        const sum = sizes.reduce((a, b) => a + b, 0);
        return Response.json({
          chunks: sizes.length,
          bytes: sum,
          median: sizes[sizes.length >> 1],
          max: sizes.at(-1),
        });
      }
      if (mode === 'native') {
        const { readable, writable } = new IdentityTransformStream();
        (async () => {
          for (const m of members) await (await ask(m)).body.pipeTo(writable, { preventClose: true });
          await writable.close();
        })();
        return new Response(readable, { headers: { 'content-type': 'application/json' } });
      }
      let i = 0;
      let reader;
      const body = new ReadableStream(
        {
          async pull(controller) {
            for (;;) {
              if (!reader) {
                if (i === members.length) return controller.close();
                const body = (await ask(members[i++])).body;
                reader = mode === 'bulk' ? body.getReader({ mode: 'byob' }) : body.getReader();
              }
              const { value, done } =
                mode === 'bulk'
                  ? await reader.readAtLeast(65536, new Uint8Array(65536))
                  : await reader.read();
              if (value?.length) return controller.enqueue(value);
              if (!done) continue;
              reader = undefined;
            }
          },
        },
        { highWaterMark: 0 },
      );
      return new Response(body, { headers: { 'content-type': 'application/json' } });
    },
  };
}

export default make('native');
