/**
 * Just enough of the Chrome DevTools Protocol to read a V8 isolate's heap from outside: workerd (through
 * miniflare's `inspectorPort`) lists one target per worker at `/json/list`; `Runtime.getHeapUsage` answers
 * with the isolate's JS heap (used and committed) and its ArrayBuffer backing stores, which is what the
 * Workers memory limit (128 MB per isolate) counts, unlike the process RSS that includes the runtime.
 */
import WebSocket from 'ws';

export interface HeapUsage {
  usedSize: number;
  totalSize: number;
  /** ArrayBuffer backing stores (outside the JS heap, inside the isolate's budget) */
  backingStorageSize: number;
}

export interface HeapWatcher {
  /** peaks since start() */
  stop(): Promise<{ peakUsed: number; peakTotal: number; peakUsedPlusBacking: number; samples: number }>;
}

export class CdpSession {
  private id = 0;
  private readonly pending = new Map<number, (msg: { result?: unknown; error?: unknown }) => void>();

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: unknown };
      if (msg.id !== undefined) {
        this.pending.get(msg.id)?.(msg);
        this.pending.delete(msg.id);
      }
    });
  }

  /** Connects to the target whose id is `targetId` (workerd: `core:user:<worker name>`). */
  static async connect(inspectorUrl: URL, targetId: string): Promise<CdpSession> {
    const base = inspectorUrl.href.replace(/^ws/, 'http').replace(/\/$/, '');
    const targets = (await (await fetch(`${base}/json/list`)).json()) as Array<{
      id: string;
      webSocketDebuggerUrl: string;
    }>;
    const t = targets.find((x) => x.id === targetId);
    if (!t) throw new Error(`no inspector target ${targetId} (have ${targets.map((x) => x.id).join(', ')})`);
    const ws = new WebSocket(t.webSocketDebuggerUrl);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new CdpSession(ws);
  }

  call<T>(method: string, params: object = {}, timeoutMs = 5_000): Promise<T> {
    const id = ++this.id;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, (msg) => {
        clearTimeout(timer);
        if (msg.error) reject(new Error(`${method}: ${JSON.stringify(msg.error)}`));
        else resolve(msg.result as T);
      });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  heapUsage(): Promise<HeapUsage> {
    return this.call<HeapUsage>('Runtime.getHeapUsage');
  }

  /** Samples the heap every `intervalMs` until stopped. */
  watchHeap(intervalMs = 50): HeapWatcher {
    let peakUsed = 0;
    let peakTotal = 0;
    let peakUsedPlusBacking = 0;
    let samples = 0;
    let running = true;
    const loop = (async () => {
      while (running) {
        try {
          const h = await this.heapUsage();
          samples++;
          peakUsed = Math.max(peakUsed, h.usedSize);
          peakTotal = Math.max(peakTotal, h.totalSize);
          peakUsedPlusBacking = Math.max(peakUsedPlusBacking, h.usedSize + (h.backingStorageSize ?? 0));
        } catch {
          // a busy isolate may answer late: skip the sample
        }
        await new Promise((r) => setTimeout(r, intervalMs));
      }
    })();
    return {
      stop: async () => {
        running = false;
        await loop;
        return { peakUsed, peakTotal, peakUsedPlusBacking, samples };
      },
    };
  }

  close(): void {
    this.ws.close();
  }
}
