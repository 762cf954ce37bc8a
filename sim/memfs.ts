/**
 * A container's filesystem in memory: directories and regular files with a mode and a modification time.
 * One per container, kept across exec sessions, so `kubectl cp` to a pod and back finds its files.
 */

export interface FileEntry {
  kind: 'file';
  data: Uint8Array;
  mode: number;
  mtime: Date;
}
export interface DirEntry {
  kind: 'dir';
  mode: number;
  mtime: Date;
}
export type Entry = FileEntry | DirEntry;

/** `/a/./b/../c/` → `/a/c`; always absolute. */
export function normalize(p: string): string {
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return `/${out.join('/')}`;
}

export function parentOf(p: string): string {
  const i = p.lastIndexOf('/');
  return i <= 0 ? '/' : p.slice(0, i);
}

export class MemFs {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => Date = () => new Date()) {
    this.entries.set('/', { kind: 'dir', mode: 0o755, mtime: now() });
  }

  get(p: string): Entry | undefined {
    return this.entries.get(normalize(p));
  }
  exists(p: string): boolean {
    return this.entries.has(normalize(p));
  }
  isDir(p: string): boolean {
    return this.get(p)?.kind === 'dir';
  }
  readFile(p: string): Uint8Array | undefined {
    const e = this.get(p);
    return e?.kind === 'file' ? e.data : undefined;
  }

  /** Creates or replaces a file; false when its directory does not exist or the path is a directory. */
  writeFile(p: string, data: Uint8Array | string, mode = 0o644, mtime?: Date): boolean {
    const path = normalize(p);
    if (!this.isDir(parentOf(path)) || this.isDir(path) || path === '/') return false;
    const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    const prev = this.entries.get(path);
    this.entries.set(path, {
      kind: 'file',
      data: bytes,
      mode: prev?.kind === 'file' && mode === 0o644 ? prev.mode : mode,
      mtime: mtime ?? this.now(),
    });
    return true;
  }

  /** mkdir / mkdir -p; false when it exists as a file, or a parent is missing without `parents`. */
  mkdir(p: string, parents = false, mode = 0o755): boolean {
    const path = normalize(p);
    if (this.isDir(path)) return parents;
    if (this.exists(path)) return false;
    if (!this.isDir(parentOf(path))) {
      if (!parents || !this.mkdir(parentOf(path), true)) return false;
    }
    this.entries.set(path, { kind: 'dir', mode, mtime: this.now() });
    return true;
  }

  /** Names directly inside a directory, sorted. */
  list(dir: string): string[] {
    const d = normalize(dir);
    const prefix = d === '/' ? '/' : `${d}/`;
    const names: string[] = [];
    for (const k of this.entries.keys())
      if (k !== d && k.startsWith(prefix) && !k.slice(prefix.length).includes('/'))
        names.push(k.slice(prefix.length));
    return names.sort();
  }

  /** The path and everything under it, parents first. */
  walk(p: string): [string, Entry][] {
    const path = normalize(p);
    const prefix = path === '/' ? '/' : `${path}/`;
    return [...this.entries]
      .filter(([k]) => k === path || k.startsWith(prefix))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  remove(p: string): void {
    for (const [k] of this.walk(p)) if (k !== '/') this.entries.delete(k);
  }
}
