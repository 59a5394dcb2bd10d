// client-go's JSONPath: the cases of its own tests (util/jsonpath/jsonpath_test.go and parser_test.go, on JSON data
// rather than Go structs: a map's keys come out sorted where a struct keeps its field order), and what the CRD
// machinery depends on (missing keys, errors, Go's kinds in comparisons, how values print).
import { describe, expect, it } from 'vitest';
import { compileJsonPath, compileJsonPathTemplate, formatGoFloat, formatGoValue, goJsonMarshal, printJsonPathValue } from './json-path.js';

/** execute is JSONPath.Execute: each action's results printed as PrintResults does (space-separated), concatenated. */
function execute(template: string, data: unknown, allowMissingKeys = false): string {
  const path = compileJsonPathTemplate(template, { allowMissingKeys });
  return path
    .findResults(data)
    .map((values) => values.map(printJsonPathValue).join(' '))
    .join('');
}
const executeError = (template: string, data: unknown, allowMissingKeys = false): string => {
  try {
    return `no error: ${execute(template, data, allowMissingKeys)}`;
  } catch (e) {
    return (e as Error).message;
  }
};
const parseError = (template: string): string => {
  try {
    compileJsonPathTemplate(template);
    return 'nil';
  } catch (e) {
    return (e as Error).message;
  }
};

const types = {
  bools: [true, false, true, false],
  integers: [1, 2, 3, 4],
  floats: [1.0, 2.2, 3.3, 4.0],
  strings: ['one', 'two', 'three', 'four'],
  interfaces: [true, 'one', 1, 1.1],
  maps: [
    { name: 'one', value: 1 },
    { name: 'two', value: 2.02 },
    { name: 'three', value: 3.03 },
    { name: 'four', value: 4.04 },
  ],
};

describe('TestTypesInput', () => {
  it.each([
    ['{ .bools }', '[true,false,true,false]'],
    ['{ .bools[0] }', 'true'],
    ['{ .bools[-1] }', 'false'],
    ['{ .bools[0:2] }', 'true false'],
    ['{ .bools[:2] }', 'true false'],
    ['{ .bools[:4:2] }', 'true true'],
    ['{ .integers }', '[1,2,3,4]'],
    ['{ .integers[0] }', '1'],
    ['{ .integers[-2] }', '3'],
    ['{ .integers[0:2] }', '1 2'],
    ['{ .integers[:2] }', '1 2'],
    ['{ .integers[:4:2] }', '1 3'],
    ['{ .floats }', '[1,2.2,3.3,4]'],
    ['{ .floats[0] }', '1'],
    ['{ .floats[-2] }', '3.3'],
    ['{ .floats[0:2] }', '1 2.2'],
    ['{ .floats[:4:2] }', '1 3.3'],
    ['{ .strings }', '["one","two","three","four"]'],
    ['{ .strings[-2] }', 'three'],
    ['{ .strings[:4:2] }', 'one three'],
    ['{ .interfaces }', '[true,"one",1,1.1]'],
    ['{ .interfaces[0:2] }', 'true one'],
    ['{ .interfaces[:4:2] }', 'true 1'],
    ['{ .maps }', '[{"name":"one","value":1},{"name":"two","value":2.02},{"name":"three","value":3.03},{"name":"four","value":4.04}]'],
    ['{ .maps[0] }', '{"name":"one","value":1}'],
    ['{ .maps[-2] }', '{"name":"three","value":3.03}'],
    ['{ .maps[0:2] }', '{"name":"one","value":1} {"name":"two","value":2.02}'],
    ['{ .maps[::2] }', '{"name":"one","value":1} {"name":"three","value":3.03}'],
    ['{ .maps[1::2] }', '{"name":"two","value":2.02} {"name":"four","value":4.04}'],
  ])('%s', (template, want) => expect(execute(template, types)).toBe(want));
});

const store = {
  Name: 'jsonpath',
  Book: [
    { Category: 'reference', Author: 'Nigel Rees', Title: 'Sayings of the Centurey', Price: 8.95 },
    { Category: 'fiction', Author: 'Evelyn Waugh', Title: 'Sword of Honour', Price: 12.99 },
    { Category: 'fiction', Author: 'Herman Melville', Title: 'Moby Dick', Price: 8.99 },
  ],
  Bicycle: [
    { Color: 'red', Price: 19.95, IsNew: true },
    { Color: 'green', Price: 20.01, IsNew: false },
  ],
  Labels: { engieer: 10, 'web/html': 15, 'k8s-app': 20 },
  Employees: { jason: 'manager', dan: 'clerk' },
};

describe('TestStructInput (as JSON)', () => {
  it.each([
    ['plain', 'hello jsonpath', null, 'hello jsonpath'],
    ['recursive', '{..}', [1, 2, 3], '[1,2,3]'],
    ['filter', '{[?(@<5)]}', [2, 6, 3, 7], '2 3'],
    ['quote', '{"{"}', null, '{'],
    ['union', '{[1,3,4]}', [0, 1, 2, 3, 4], '1 3 4'],
    ['array', '{[0:2]}', ['Monday', 'Tudesday'], 'Monday Tudesday'],
    ['variable', 'hello {.Name}', store, 'hello jsonpath'],
    ['dict/', '{$.Labels.web/html}', store, '15'],
    ['dict/', '{$.Employees.jason}', store, 'manager'],
    ['dict-', '{.Labels.k8s-app}', store, '20'],
    ['nest', '{.Bicycle[*].Color}', store, 'red green'],
    ['allarray', '{.Book[*].Author}', store, 'Nigel Rees Evelyn Waugh Herman Melville'],
    // a map's values in sorted key order (Color, IsNew, Price), where Go's struct keeps its field order
    ['allfields', '{range .Bicycle[*]}{ "{" }{ @.* }{ "} " }{end}', store, '{red true 19.95} {green false 20.01} '],
    // pre-order over sorted keys: Bicycle before Book
    ['recurfields', '{..Price}', store, '19.95 20.01 8.95 12.99 8.99'],
    ['recurdotfields', '{...Price}', store, '19.95 20.01 8.95 12.99 8.99'],
    ['lastarray', '{.Book[-1:]}', store, '{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}'],
    ['recurarray', '{..Book[2]}', store, '{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}'],
    ['bool', '{.Bicycle[?(@.IsNew==true)]}', store, '{"Color":"red","IsNew":true,"Price":19.95}'],
  ])('%s: %s', (_name, template, data, want) => expect(execute(template, data)).toBe(want));

  it('fails as client-go does', () => {
    expect(parseError('{............................................................Price}')).toBe('invalid multiple recursive descent');
    expect(executeError('{hello}', store)).toBe('unrecognized identifier hello');
    expect(executeError('{.hello}', store)).toBe('hello is not found');
    expect(executeError('{.Labels[0]}', store)).toBe('map[string]interface {} is not array or slice');
    expect(executeError('{.Book[?(@.Price<>10)]}', store)).toBe('unrecognized filter operator <>');
    expect(executeError('{range .Labels.*}{@}{end}{end}', store)).toBe('not in range, nothing to end');
  });

  it('gives nothing for a missing key when missing keys are allowed', () => {
    expect(execute('{.hello}', store, true)).toBe('');
    expect(execute('before-{.hello}after', store, true)).toBe('before-after');
  });
});

const points = [
  { id: 'i1', x: 4, y: -5 },
  { id: 'i2', x: -2, y: -5, z: 1 },
  { id: 'i3', x: 8, y: 3 },
  { id: 'i4', x: -6, y: -1 },
  { id: 'i5', x: 0, y: 2, z: 1 },
  { id: 'i6', x: 1, y: 4 },
];
const nodes = {
  kind: 'List',
  items: [
    {
      kind: 'None',
      metadata: { name: '127.0.0.1', labels: { 'kubernetes.io/hostname': '127.0.0.1' } },
      status: { capacity: { cpu: '4' }, ready: true, addresses: [{ type: 'LegacyHostIP', address: '127.0.0.1' }] },
    },
    {
      kind: 'None',
      metadata: { name: '127.0.0.2', labels: { 'kubernetes.io/hostname': '127.0.0.2' } },
      status: {
        capacity: { cpu: '8' },
        ready: false,
        addresses: [
          { type: 'LegacyHostIP', address: '127.0.0.2' },
          { type: 'another', address: '127.0.0.3' },
        ],
      },
    },
  ],
  users: [
    { name: 'myself', user: {} },
    { name: 'e2e', user: { username: 'admin', password: 'secret' } },
  ],
};

describe('TestJSONInput, TestKubernetes, ranges', () => {
  it.each([
    ['{[?(@.z)].id}', points, 'i2 i5'],
    ["{[0]['id']}", points, 'i1'],
    ['{range .items[*]}{.metadata.name}, {end}{.kind}', nodes, '127.0.0.1, 127.0.0.2, List'],
    ['{range .items[*]}{.metadata.name}{"\\t"}{end}', nodes, '127.0.0.1\t127.0.0.2\t'],
    ['{.items[*].status.addresses[*].address}', nodes, '127.0.0.1 127.0.0.2 127.0.0.3'],
    ['{range .items[*]}{range .status.addresses[*]}{.address}, {end}{end}', nodes, '127.0.0.1, 127.0.0.2, 127.0.0.3, '],
    ['{.items[*].metadata.name}', nodes, '127.0.0.1 127.0.0.2'],
    ["{.items[*]['metadata.name', 'status.capacity']}", nodes, '127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}'],
    ['{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}', nodes, '[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] '],
    ['{.users[?(@.name=="e2e")].user.password}', nodes, 'secret'],
    ['{.items[0].metadata.labels.kubernetes\\.io/hostname}', nodes, '127.0.0.1'],
    ['{.items[?(@.metadata.labels.kubernetes\\.io/hostname=="127.0.0.1")].kind}', nodes, 'None'],
    ['{.items[?(@..ready==true)].metadata.name}', nodes, '127.0.0.1'],
    ['{..name}', nodes, '127.0.0.1 127.0.0.2 myself e2e'],
  ])('%s', (template, data, want) => expect(execute(template, data)).toBe(want));

  it('ranges over nothing, and nests ranges', () => {
    expect(execute('{range .items[*]}{.metadata.name}{end}', { items: [] }, true)).toBe('');
    expect(execute('{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}', { items: [] }, true)).toBe('');
    const pods = {
      items: [
        {
          metadata: { name: 'pod1' },
          spec: {
            containers: [
              { name: 'foo', another: [{ name: 'value1' }, { name: 'value2' }] },
              { name: 'bar', another: [{ name: 'value1' }, { name: 'value2' }] },
            ],
          },
        },
        { metadata: { name: 'pod2' }, spec: { containers: [{ name: 'baz', another: [{ name: 'value1' }, { name: 'value2' }] }] } },
      ],
    };
    expect(execute('{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}', pods)).toBe('pod1:foo,bar,+pod2:baz,+');
    expect(
      execute('{range .items[*]}{.metadata.name}{"~"}{range @.spec.containers[*]}{.name}{":"}{range @.another[*]}{.name}{","}{end}{"+"}{end}{"#"}{end}', pods),
    ).toBe('pod1~foo:value1,value2,+bar:value1,value2,+#pod2~baz:value1,value2,+#');
    expect(
      execute(
        '{range .items[*]}{.metadata.name}{"\\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\\n"}{end}',
        pods,
      ),
    ).toBe('pod1\tfoo bar \tfoo bar \npod2\tbaz \tbaz \n');
  });

  it('filters skip items missing the key (issues.k8s.io/45546), and fail on them without AllowMissingKeys', () => {
    const data = {
      items: [
        { metadata: { name: 'pod1', annotations: { color: 'blue' } } },
        { metadata: { name: 'pod2' } },
        { metadata: { name: 'pod3', annotations: { color: 'green' } } },
        { metadata: { name: 'pod4', annotations: { color: 'blue' } } },
      ],
    };
    const template = '{.items[?(@.metadata.annotations.color=="blue")].metadata.name}';
    expect(execute(template, data, true)).toBe('pod1 pod4');
    expect(executeError(template, data, false)).toBe('annotations is not found');
    const running = {
      items: [
        { metadata: { name: 'pod1' }, status: { phase: 'Running' } },
        { metadata: { name: 'pod2' }, status: { phase: 'Running' } },
        { metadata: { name: 'pod3' }, status: { phase: 'Running' } },
        { resourceVersion: '', selfLink: '' },
      ],
    };
    expect(execute('{range .items[?(.status.phase=="Running")]}{.metadata.name}{" is Running\\n"}{end}', running, true)).toBe(
      'pod1 is Running\npod2 is Running\npod3 is Running\n',
    );
  });
});

describe('TestNegativeIndex, TestStep', () => {
  const pod = (n: number) => ({ spec: { containers: Array.from({ length: n }, (_, i) => ({ image: 'radial/busyboxplus:curl', name: `fake${i}` })) } });
  it.each([
    ['[0]', 'fake0'],
    ['[0:0]', ''],
    ['[0:-1]', 'fake0 fake1 fake2'],
    ['[-1]', 'fake3'],
    ['[-1:]', 'fake3'],
    ['[-2]', 'fake2'],
    ['[-2:]', 'fake2 fake3'],
    ['[-3]', 'fake1'],
    ['[-4]', 'fake0'],
    ['[-4:]', 'fake0 fake1 fake2 fake3'],
    ['[5:5]', ''],
    ['[-5:-5]', ''],
  ])('containers%s of 4', (index, want) => expect(execute(`{.spec.containers${index}.name}`, pod(4))).toBe(want));
  it.each([
    ['[-1:0]', 'starting index 3 is greater than ending index 0'],
    ['[-5]', 'array index out of bounds: index -1, length 4'],
    ['[3:1]', 'starting index 3 is greater than ending index 1'],
    ['[-1:-2]', 'starting index 3 is greater than ending index 2'],
    ['[4]', 'array index out of bounds: index 4, length 4'],
    ['[0:5]', 'array index out of bounds: index 4, length 4'],
  ])('containers%s of 4 fails', (index, want) => expect(executeError(`{.spec.containers${index}.name}`, pod(4))).toBe(want));
  it.each([
    ['[0:]', 'fake0 fake1 fake2 fake3 fake4 fake5'],
    ['[0:6:]', 'fake0 fake1 fake2 fake3 fake4 fake5'],
    ['[1:4:2]', 'fake1 fake3'],
    ['[1:4:3]', 'fake1'],
    ['[1:4:4]', 'fake1'],
    ['[0:6:2]', 'fake0 fake2 fake4'],
    ['[0:6:3]', 'fake0 fake3'],
    ['[0:6:5]', 'fake0 fake5'],
    ['[0:6:6]', 'fake0'],
  ])('containers%s of 6', (index, want) => expect(execute(`{.spec.containers${index}.name}`, pod(6))).toBe(want));
  it('a step of 0 or less fails', () => {
    expect(executeError('{.spec.containers[0:6:0].name}', pod(6))).toBe('step must be > 0');
    expect(executeError('{.spec.containers[0:6:-1].name}', pod(6))).toBe('step must be > 0');
  });
});

describe('TestParser, TestFailParser', () => {
  it('parses what client-go parses', () => {
    for (const t of [
      'hello {.jsonpath}',
      "hello {['jsonpath']}",
      '{"{"}',
      '{[1:3]}',
      '{.book[*].author}',
      '{.bicycle.*}',
      '{[?(@.price<3)]}',
      '{..}',
      '{..price}',
      "{['book.price']}",
      "{['bicycle.price', 3, 'book.price']}",
      '{range .items}{.name},{end}',
      '{[?(@.status.nodeInfo.osImage == "()")]}',
      '{[?(@.status.nodeInfo.osImage == "(\\"\\")")]}',
      '{[?(@.test == "())(")]}',
      "{[?(@.status.nodeInfo.osImage == 'Linux')]}",
      '{[?(@.status.nodeInfo.osImage == "{[()]}")]}',
      '{[?(@.status.nodeInfo.osImage == "\'\'")]}',
      '{[?(@.status.nodeInfo.osImage == \'""\')]}',
      '{[-5:]}',
      '{[-1]}',
      '{[1:-1]}',
    ]) {
      expect(parseError(t), t).toBe('nil');
    }
  });
  it.each([
    ['{.hello', 'unclosed action'],
    ['{*}', "unrecognized character in action: U+002A '*'"],
    ['{+12.3.0}', 'cannot parse number +12.3.0'],
    ['{[1}', 'unterminated array'],
    ['{[?(.price]}', 'unterminated filter'],
    ['{........}', 'invalid multiple recursive descent'],
    // kube-apiserver drops a printer column from these on (its Table has only the columns before it)
    ['{.spec.x[}', 'unterminated array'],
    ['{..*}', "unrecognized character in action: U+002A '*'"],
    ['{.spec.l[?(@.a=="b")}', 'unclosed array expect ]'],
    ['{.spec.a\t}', 'unrecognized character in action: U+0009'],
    ['{.spec.l[-]}', 'array index - is not a number'],
    ['{["a"]}', 'invalid array index "a"'],
    ['{"a\\q"}', 'unquote string "a\\q" error invalid syntax'],
    ['{"abc}', 'unterminated quoted string'],
    ['{[?(@.a=="b")x}', 'unclosed array expect ]'],
  ])('%s fails: %s', (template, want) => expect(parseError(template)).toBe(want));
  it('reads quoted strings with Go escapes', () => {
    expect(execute('{"a\\tb\\u00e9\\x41\\101"}', null)).toBe('a\tbéAA');
    expect(execute("{'it\\'s'}", null)).toBe("it's");
    expect(execute("{[?(@.v=='x\"y')].n}", [{ v: 'x"y', n: 1 }])).toBe('1');
  });
});

describe('what the CRD machinery depends on', () => {
  const find = (path: string, obj: unknown) => compileJsonPath(path).find(obj);
  const findError = (path: string, obj: unknown) => {
    try {
      return `no error: ${JSON.stringify(find(path, obj))}`;
    } catch (e) {
      return (e as Error).message;
    }
  };

  it('wraps the path as {path}, allows missing keys, and finds nothing in what is not a map', () => {
    const obj = { spec: { s: 'abc', l: [{ a: 1 }, { a: 2 }], n: null, m: { 'a.b': 1, a: { b: 2 } } } };
    expect(find('.spec.missing.deeper', obj)).toEqual([]);
    expect(find('.spec.s.length', obj)).toEqual([]);
    expect(find('.spec.l.length', obj)).toEqual([]);
    expect(find('.spec.l[*].a', obj)).toEqual([1, 2]);
    expect(find('.spec.n', obj)).toEqual([null]);
    expect(find('.spec.n.x', obj)).toEqual([]);
    expect(find(".spec.m['a.b']", obj)).toEqual([2]); // client-go parses the key as a path
    expect(find('.spec.m.a\\.b', obj)).toEqual([1]);
    expect(find('.spec.s.*', obj)).toEqual([97, 98, 99]); // the bytes of the string
    expect(find('.spec.l[]', obj)).toEqual([{ a: 1 }]); // an empty index is [0]
    expect(find('.spec.a}{.spec.s', { spec: { a: 'A', s: 'S' } })).toEqual(['A', 'S']);
    expect(compileJsonPath('.spec.a}{.spec.s').findResults({ spec: { s: 'S' } })).toEqual([[], ['S']]);
  });

  it('visits only non-empty containers in a recursive descent, in pre-order over sorted keys', () => {
    const obj = { b: { x: 1, c: [{ x: 2 }] }, a: { x: 3 }, e: {}, s: 'str' };
    expect(find('..x', obj)).toEqual([3, 1, 2]);
    expect(find('..', { a: [], b: 1 })).toEqual([{ a: [], b: 1 }]);
    expect(findError('..[0]', obj)).toBe('map[string]interface {} is not array or slice');
  });

  it('compares as text/template does: mixed types fail the whole path, missing keys skip the item', () => {
    const l = [{ type: 'Ready', v: 1, f: 1.5, b: true }, { type: 'Other', v: 2 }, { v: 3 }];
    expect(find('[?(@.type=="Ready")].v', l)).toEqual([1]);
    expect(find('[?(@.v>=2)].v', l)).toEqual([2, 3]);
    expect(find('[?(@.f>1.2)].v', l)).toEqual([1]);
    expect(find('[?(@.b==true)].v', l)).toEqual([1]);
    expect(find('[?(@.type!="Ready")].v', l)).toEqual([2]);
    expect(find('[?(@.type<"P")].v', l)).toEqual([2]);
    expect(findError('[?(@.v=="1")]', l)).toBe('incompatible types for comparison');
    expect(findError('[?(@.v==1.0)]', l)).toBe('incompatible types for comparison');
    expect(findError('[?(@.b<true)]', l)).toBe('invalid type for comparison');
    expect(findError('[?(@==1)]', [{ a: 1 }])).toBe('invalid type for comparison');
    expect(findError('[?(@.v=1)]', l)).toBe('unrecognized filter operator =');
    expect(findError('[?(@.type)]', { type: 'x' })).toBe('map[type:x] is not array or slice and cannot be filtered');
    expect(findError('[?(@.type)]', 'text')).toBe('text is not array or slice and cannot be filtered');
    expect(findError('.x[?(@.type)]', { x: null })).toBe('<nil> is not array or slice and cannot be filtered');
    expect(find('[?(@.type)].v', l)).toEqual([1, 2]);
    expect(findError('[?(@.l[*]==1)]', [{ l: [1, 2] }])).toBe('can only compare one element at a time');
    // a string's bytes are uint8: they compare with integers, not with strings
    expect(find('[?(@.s.*==98)].s', [{ s: 'b' }, { s: 'c' }])).toEqual(['b']);
    expect(findError('[?(@.s.*=="b")].s', [{ s: 'b' }])).toBe('incompatible types for comparison');
  });

  it('stops at an empty slice of the first input, as client-go returns at once', () => {
    expect(find('.l[*][0:0]', { l: [[1], [2]] })).toEqual([]);
    expect(find('.l[*][0]', { l: [[1], [2]] })).toEqual([1, 2]);
  });

  it('prints values as the table convertor does (JSON for maps and lists, fmt for the rest)', () => {
    expect(printJsonPathValue({ b: 1, a: ['x', null, 2.5, { z: true }] })).toBe('{"a":["x",null,2.5,{"z":true}],"b":1}');
    expect(printJsonPathValue(['<a&b>', '\u2028'])).toBe('["\\u003ca\\u0026b\\u003e","\\u2028"]');
    expect(printJsonPathValue(null)).toBe('<no value>');
    expect(printJsonPathValue(1e21)).toBe('1e+21');
    expect(printJsonPathValue(1234567.5)).toBe('1.2345675e+06');
    expect(printJsonPathValue(100000.25)).toBe('100000.25');
    expect(printJsonPathValue(0.00001)).toBe('1e-05');
    expect(printJsonPathValue(0.0001)).toBe('0.0001');
    expect(printJsonPathValue(123456789012)).toBe('123456789012');
    expect(printJsonPathValue(true)).toBe('true');
    expect(goJsonMarshal({ f: 1e21, g: 1e-7, h: 0.000001 })).toBe('{"f":1e+21,"g":1e-7,"h":0.000001}');
    expect(formatGoValue({ b: [1, null], a: 'x' })).toBe('map[a:x b:[1 <nil>]]');
    expect(formatGoFloat(-2.5e-10)).toBe('-2.5e-10');
    expect(formatGoFloat(1e100)).toBe('1e+100');
    expect(formatGoFloat(123456)).toBe('123456');
  });

  it('keeps client-go state across calls: a range narrows the template for later calls, as kube reuses one JSONPath', () => {
    const path = compileJsonPathTemplate('{range .l[*]}{.n}{end}{.k}');
    const data = { l: [{ n: 1 }, { n: 2 }], k: 'K' };
    expect(path.find(data)).toEqual([1, 2, 'K']);
    // the template is now `{.n}{end}{.k}` with nothing to end
    expect(() => path.find(data)).toThrow('not in range, nothing to end');
  });
});
