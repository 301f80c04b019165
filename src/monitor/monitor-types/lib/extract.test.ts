import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkXml, compareValue, declaredFormat, extractValue, parseBody, toNumber } from './extract.js';

describe('extract', () => {
  it('compareValue: the five comparisons', () => {
    assert.deepEqual(compareValue('42', 'number >', '40'), { matched: true });
    assert.deepEqual(compareValue('40', 'number >', '40'), { matched: false });
    assert.deepEqual(compareValue('3.5', 'number <', '4'), { matched: true });
    assert.deepEqual(compareValue('42.0', 'number ==', '42'), { matched: true });
    assert.deepEqual(compareValue('42 ms', 'number ==', '42'), { matched: true });
    assert.deepEqual(compareValue('ok', 'string ==', 'ok'), { matched: true });
    assert.deepEqual(compareValue('ok ', 'string ==', 'ok'), { matched: false });
    assert.deepEqual(compareValue('running fine', 'string contains', 'run'), { matched: true });
    assert.deepEqual(compareValue('stopped', 'string contains', 'run'), { matched: false });
  });

  it('compareValue: errors for non-numbers and unknown comparisons', () => {
    assert.equal(compareValue('abc', 'number >', '1').matched, false);
    assert.match(compareValue('abc', 'number >', '1').error ?? '', /not a number/);
    assert.match(compareValue('1', 'number <', 'x').error ?? '', /patternCompValCri/);
    assert.match(compareValue('1', 'number >=', '1').error ?? '', /unknown patternComp/);
  });

  it('toNumber', () => {
    assert.equal(toNumber(' 1e3 '), 1000);
    assert.equal(toNumber('temp=-4.5C'), -4.5);
    assert.equal(toNumber('none'), undefined);
  });

  it('extractValue: group name, index, default', () => {
    const m = { match: 'a=1', groups: ['a=1', 'a', '1'], named: { k: 'a' }, index: 0 };
    assert.deepEqual(extractValue(m, { matchGroupName: 'k' }), { value: 'a' });
    assert.deepEqual(extractValue(m, { matchIndex: '2' }), { value: '1' });
    assert.deepEqual(extractValue(m, { matchIndex: '0' }), { value: 'a=1' });
    assert.deepEqual(extractValue(m, {}), { value: 'a' });
    assert.match(extractValue(m, { matchIndex: '3' }).error ?? '', /beyond/);
    assert.deepEqual(extractValue({ match: 'x', groups: ['x'], named: {}, index: 0 }, {}), { value: 'x' });
  });

  it('body formats', () => {
    assert.equal(declaredFormat('application/json; charset=utf-8'), 'json');
    assert.equal(declaredFormat('application/problem+json'), 'json');
    assert.equal(declaredFormat('text/xml'), 'xml');
    assert.equal(declaredFormat('text/html'), 'text');
    assert.deepEqual(parseBody('application/json', '{"a":1}'), { format: 'json', json: { a: 1 } });
    assert.match(parseBody('application/json', '{').error ?? '', /invalid JSON/);
    assert.deepEqual(parseBody('application/json', '{', true), { format: 'json' });
    assert.equal(checkXml('<?xml version="1.0"?><!-- c --><a x="1"><b/><c><![CDATA[<x>]]></c></a>'), undefined);
    assert.match(checkXml('<a><b></a>') ?? '', /does not close/);
    assert.match(checkXml('<a></a><b></b>') ?? '', /more than one root/);
    assert.match(checkXml('plain') ?? '', /no root/);
  });
});
