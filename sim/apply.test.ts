import { describe, expect, it } from 'vitest';
import { SimCluster } from './cluster.ts';
import { call } from './testing.ts';

const PATH = '/api/v1/namespaces/default/configmaps/owned';
const apply = (s: SimCluster, manager: string, data: Record<string, string>, force = false) =>
  call(s, `${PATH}?fieldManager=${manager}${force ? '&force=true' : ''}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/apply-patch+yaml' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owned' }, data }),
  });

describe('server-side apply ownership', () => {
  it("is a Conflict to change another Apply manager's field, unless forced; then the field changes hands", async () => {
    const s = new SimCluster({ name: 'm', seed: false });
    s.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: 'default' } });
    try {
      expect((await apply(s, 'a', { x: '1', shared: 'a' })).status).toBe(201);
      // another manager's fields, and the same value in a field it does not own, are fine
      expect((await apply(s, 'b', { y: '2', shared: 'a' })).status).toBe(200);
      const c = await apply(s, 'b', { y: '2', shared: 'b', x: '9' });
      expect(c.status).toBe(409);
      expect(c.body).toMatchObject({
        kind: 'Status',
        reason: 'Conflict',
        code: 409,
        message: 'Apply failed with 2 conflicts: conflicts with "a":\n- .data.shared\n- .data.x',
        details: {
          name: 'owned',
          kind: 'configmaps',
          causes: [
            { reason: 'FieldManagerConflict', message: 'conflict with "a"', field: '.data.shared' },
            { reason: 'FieldManagerConflict', message: 'conflict with "a"', field: '.data.x' },
          ],
        },
      });
      const forced = await apply(s, 'b', { y: '2', shared: 'b' }, true);
      expect(forced.status).toBe(200);
      expect(forced.body.data).toEqual({ x: '1', shared: 'b', y: '2' });
      const a = forced.body.metadata.managedFields.find((m: { manager: string }) => m.manager === 'a');
      expect(a.fieldsV1).toEqual({ 'f:data': { '.': {}, 'f:x': {} } });
      // a now conflicts taking its field back
      expect((await apply(s, 'a', { x: '1', shared: 'a' })).status).toBe(409);
    } finally {
      s.close();
    }
  });
});
