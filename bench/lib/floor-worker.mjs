/**
 * The floor of a merged list on workerd (not a test, not a bench case), as ./floor-proxy.mjs is on Node: a
 * worker that reads the ten canned clusters' bodies (FLEET_CONFIG's members, one after another) and
 * answers their bytes concatenated, no scan, no relay. `make(mode)`: `native` pipes each body through an
 * IdentityTransformStream (no JavaScript per chunk), `js` reads each chunk in JavaScript and enqueues it
 * into a ReadableStream of its own (the least a fleet written over web streams pays per chunk). Run it
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
          const r = (await ask(m)).body.getReader();
          for (;;) {
            const { value, done } = await r.read();
            if (done) break;
            sizes.push(value.byteLength);
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
                reader = (await ask(members[i++])).body.getReader();
              }
              const { value, done } = await reader.read();
              if (!done) return controller.enqueue(value);
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
