/**
 * Server-side printing: meta.k8s.io Table and PartialObjectMetadata(List), as kube-apiserver answers
 * `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` (kubectl get) and the metadata informers.
 */

import type { ColumnDefinition, KubeObject, ResourceDef, TablePrinter } from './catalog/types.ts';

export const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

export const CREATION_TIMESTAMP_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** rest.NewDefaultTableConvertor: Name and "Created At" (a date cell, not an Age). */
export const DEFAULT_PRINTER: TablePrinter = {
  columns: [
    { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 },
    {
      name: 'Created At',
      type: 'date',
      format: '',
      description: CREATION_TIMESTAMP_DESCRIPTION,
      priority: 0,
    },
  ],
  cells: (obj) => [obj.metadata.name ?? '', obj.metadata.creationTimestamp ?? null],
};

// Age cells: the catalog's HumanDuration (catalog/duration.ts), one implementation for engine and printers
export { age, humanDuration } from './catalog/duration.ts';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function parseIncludeObject(v: string | null): IncludeObject | undefined {
  if (v === null || v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  return undefined;
}

export function partialObjectMetadata(obj: KubeObject, version = 'v1'): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata };
}

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface TableOptions {
  version: string;
  includeObject: IncludeObject;
  /** watch events after the first: columnDefinitions null (TableOptions.NoHeaders) */
  noHeaders?: boolean;
  now: Date;
}

export function printerFor(def: ResourceDef): TablePrinter {
  return def.printer ?? DEFAULT_PRINTER;
}

export function toTable(def: ResourceDef, objs: KubeObject[], meta: ListMeta, opts: TableOptions): unknown {
  const printer = printerFor(def);
  const columns: ColumnDefinition[] | null = opts.noHeaders ? null : printer.columns;
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${opts.version}`,
    metadata: meta,
    columnDefinitions: columns,
    rows: objs.map((o) => {
      const row: Record<string, unknown> = { cells: printer.cells(o, opts.now) };
      const phase = (o as { status?: { phase?: string } }).status?.phase;
      if (def.resource === 'pods' && (phase === 'Succeeded' || phase === 'Failed')) {
        // pod rows carry a Completed condition (printers.go podSuccessConditions/podFailedConditions)
        row['conditions'] = [
          {
            type: 'Completed',
            status: 'True',
            reason: phase === 'Succeeded' ? 'Succeeded' : 'Failed',
            message: phase === 'Succeeded' ? 'The pod has completed successfully.' : 'The pod failed.',
          },
        ];
      }
      row['object'] =
        opts.includeObject === 'None'
          ? null
          : opts.includeObject === 'Metadata'
            ? partialObjectMetadata(o, opts.version)
            : o;
      return row;
    }),
  };
}
