import test from 'node:test';
import assert from 'node:assert';
test('passes', () => {});
test('fails', () => { assert.strictEqual(1, 2); });
test('skipped', { skip: 'not today' }, () => {});
test('todo', { todo: true }, () => {});
test.describe('group', () => { test.it('inner', () => {}); });
