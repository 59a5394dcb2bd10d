/**
 * @module auth/request-info.test
 * requestAttributes against kube's RequestInfoFactory (k8s.io/apiserver pkg/endpoints/request/requestinfo.go); the
 * cases of its requestinfo_test.go (TestGetAPIRequestInfo, TestGetNonAPIRequestInfo, TestSelectorParsing) plus our
 * own group's paths. A wrong verb, name or subresource here is a wrong SubjectAccessReview.
 */
import { describe, expect, it } from 'vitest';
import { requestAttributes, type RequestAttributes } from './request-info.js';

type Resource = Extract<RequestAttributes, { isResourceRequest: true }>;

/** resource builds the expected attributes; `path` defaults to the URL without its query. */
function resource(url: string, a: Partial<Omit<Resource, 'isResourceRequest'>>): Resource {
  return {
    isResourceRequest: true,
    verb: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    path: url.split('?')[0] as string,
    ...a,
  };
}

const G = 'extensions.example.com';
const V = 'v1alpha1';
const NS = `/apis/${G}/${V}/namespaces/default`;

describe('resource requests (kube requestinfo_test.go TestGetAPIRequestInfo)', () => {
  const cases: [string, string, Partial<Resource>][] = [
    ['GET', '/api/v1/namespaces', { verb: 'list', apiVersion: 'v1', resource: 'namespaces' }],
    ['GET', '/api/v1/namespaces/other', { verb: 'get', apiVersion: 'v1', namespace: 'other', resource: 'namespaces', name: 'other' }],
    ['GET', '/api/v1/namespaces/other/pods', { verb: 'list', apiVersion: 'v1', namespace: 'other', resource: 'pods' }],
    ['GET', '/api/v1/namespaces/other/pods/foo', { verb: 'get', apiVersion: 'v1', namespace: 'other', resource: 'pods', name: 'foo' }],
    ['HEAD', '/api/v1/namespaces/other/pods/foo', { verb: 'get', apiVersion: 'v1', namespace: 'other', resource: 'pods', name: 'foo' }],
    ['GET', '/api/v1/pods', { verb: 'list', apiVersion: 'v1', resource: 'pods' }],
    ['HEAD', '/api/v1/pods', { verb: 'list', apiVersion: 'v1', resource: 'pods' }],
    // special verbs
    ['GET', '/api/v1/proxy/namespaces/other/pods/foo', { verb: 'proxy', apiVersion: 'v1', namespace: 'other', resource: 'pods', name: 'foo' }],
    ['GET', '/api/v1/watch/pods', { verb: 'watch', apiVersion: 'v1', resource: 'pods' }],
    ['GET', '/api/v1/pods?watch=true', { verb: 'watch', apiVersion: 'v1', resource: 'pods' }],
    ['GET', '/api/v1/pods?watch=false', { verb: 'list', apiVersion: 'v1', resource: 'pods' }],
    ['GET', '/api/v1/watch/namespaces/other/pods', { verb: 'watch', apiVersion: 'v1', namespace: 'other', resource: 'pods' }],
    ['GET', '/api/v1/namespaces/other/pods?watch=1', { verb: 'watch', apiVersion: 'v1', namespace: 'other', resource: 'pods' }],
    ['GET', '/api/v1/namespaces/other/pods?watch=0', { verb: 'list', apiVersion: 'v1', namespace: 'other', resource: 'pods' }],
    // subresources; a namespace's own status/finalize are subresources of the namespace
    [
      'GET',
      '/api/v1/namespaces/other/pods/foo/status',
      { verb: 'get', apiVersion: 'v1', namespace: 'other', resource: 'pods', subresource: 'status', name: 'foo' },
    ],
    [
      'GET',
      '/api/v1/namespaces/other/pods/foo/proxy/subpath',
      { verb: 'get', apiVersion: 'v1', namespace: 'other', resource: 'pods', subresource: 'proxy', name: 'foo' },
    ],
    [
      'PUT',
      '/api/v1/namespaces/other/finalize',
      { verb: 'update', apiVersion: 'v1', namespace: 'other', resource: 'namespaces', subresource: 'finalize', name: 'other' },
    ],
    [
      'PUT',
      '/api/v1/namespaces/other/status',
      { verb: 'update', apiVersion: 'v1', namespace: 'other', resource: 'namespaces', subresource: 'status', name: 'other' },
    ],
    // verbs
    ['PATCH', '/api/v1/namespaces/other/pods/foo', { verb: 'patch', apiVersion: 'v1', namespace: 'other', resource: 'pods', name: 'foo' }],
    ['DELETE', '/api/v1/namespaces/other/pods/foo', { verb: 'delete', apiVersion: 'v1', namespace: 'other', resource: 'pods', name: 'foo' }],
    ['POST', '/api/v1/namespaces/other/pods', { verb: 'create', apiVersion: 'v1', namespace: 'other', resource: 'pods' }],
    ['DELETE', '/api/v1/nodes', { verb: 'deletecollection', apiVersion: 'v1', resource: 'nodes' }],
    ['DELETE', '/api/v1/namespaces', { verb: 'deletecollection', apiVersion: 'v1', resource: 'namespaces' }],
    ['DELETE', '/api/v1/namespaces/other/pods', { verb: 'deletecollection', apiVersion: 'v1', namespace: 'other', resource: 'pods' }],
    [
      'DELETE',
      '/apis/extensions/v1/namespaces/other/pods',
      { verb: 'deletecollection', apiGroup: 'extensions', apiVersion: 'v1', namespace: 'other', resource: 'pods' },
    ],
    [
      'POST',
      '/apis/extensions/v1beta3/namespaces/other/pods',
      { verb: 'create', apiGroup: 'extensions', apiVersion: 'v1beta3', namespace: 'other', resource: 'pods' },
    ],
    // TestGetNonAPIRequestInfo: these are resource requests
    ['GET', '/api/version/resource', { verb: 'list', apiVersion: 'version', resource: 'resource' }],
    [
      'GET',
      '/apis/group/version/resource/name/subresource',
      { verb: 'get', apiGroup: 'group', apiVersion: 'version', resource: 'resource', name: 'name', subresource: 'subresource' },
    ],
    ['GET', '/apis/batch/v1/job/foo/scale', { verb: 'get', apiGroup: 'batch', apiVersion: 'v1', resource: 'job', name: 'foo', subresource: 'scale' }],
    // An unknown method is no verb at all, as in kube (the authorizer then denies it).
    ['OPTIONS', '/api/v1/pods/foo', { verb: '', apiVersion: 'v1', resource: 'pods', name: 'foo' }],
  ];
  for (const [method, url, want] of cases) {
    it(`${method} ${url}`, () => {
      expect(requestAttributes(method, url)).toEqual(resource(url, want));
    });
  }
});

describe('our group: websites', () => {
  const base = { apiGroup: G, apiVersion: V, resource: 'websites' };
  const cases: [string, string, Partial<Resource>][] = [
    ['GET', `/apis/${G}/${V}/websites`, { ...base, verb: 'list' }],
    ['GET', `/apis/${G}/${V}/websites?watch=true&resourceVersion=5`, { ...base, verb: 'watch' }],
    ['GET', `${NS}/websites`, { ...base, verb: 'list', namespace: 'default' }],
    ['GET', `${NS}/websites?watch=1&allowWatchBookmarks=true`, { ...base, verb: 'watch', namespace: 'default' }],
    ['GET', `${NS}/websites/kubia`, { ...base, verb: 'get', namespace: 'default', name: 'kubia' }],
    // A name in the path makes it a get even with ?watch (kube ignores the parameter then).
    ['GET', `${NS}/websites/kubia?watch=true`, { ...base, verb: 'get', namespace: 'default', name: 'kubia' }],
    ['POST', `${NS}/websites`, { ...base, verb: 'create', namespace: 'default' }],
    ['PUT', `${NS}/websites/kubia`, { ...base, verb: 'update', namespace: 'default', name: 'kubia' }],
    ['PATCH', `${NS}/websites/kubia`, { ...base, verb: 'patch', namespace: 'default', name: 'kubia' }],
    ['DELETE', `${NS}/websites/kubia`, { ...base, verb: 'delete', namespace: 'default', name: 'kubia' }],
    ['DELETE', `${NS}/websites?labelSelector=a%3Db`, { ...base, verb: 'deletecollection', namespace: 'default' }],
    ['GET', `${NS}/websites/kubia/status`, { ...base, verb: 'get', namespace: 'default', name: 'kubia', subresource: 'status' }],
    ['PUT', `${NS}/websites/kubia/status`, { ...base, verb: 'update', namespace: 'default', name: 'kubia', subresource: 'status' }],
    ['PATCH', `${NS}/websites/kubia/scale`, { ...base, verb: 'patch', namespace: 'default', name: 'kubia', subresource: 'scale' }],
    ['GET', `${NS}/websites/kubia/scale`, { ...base, verb: 'get', namespace: 'default', name: 'kubia', subresource: 'scale' }],
    // The deprecated watch prefix, for a collection and for one object.
    ['GET', `/apis/${G}/${V}/watch/websites`, { ...base, verb: 'watch' }],
    ['GET', `/apis/${G}/${V}/watch/namespaces/default/websites`, { ...base, verb: 'watch', namespace: 'default' }],
    ['GET', `/apis/${G}/${V}/watch/namespaces/default/websites/kubia`, { ...base, verb: 'watch', namespace: 'default', name: 'kubia' }],
    // Percent-encoded segments are decoded (kube reads the decoded URL.Path).
    ['GET', `/apis/${G}/${V}/namespaces/my%2Dns/websites`, { ...base, verb: 'list', namespace: 'my-ns' }],
  ];
  for (const [method, url, want] of cases) {
    it(`${method} ${url}`, () => {
      expect(requestAttributes(method, url)).toEqual(resource(url, want));
    });
  }

  it('keeps the path without the query', () => {
    expect(requestAttributes('GET', `${NS}/websites?limit=5`).path).toBe(`${NS}/websites`);
  });
});

describe('watch parameter values', () => {
  const verb = (q: string) => requestAttributes('GET', `${NS}/websites?${q}`).verb;
  it('treats every value except 0 and false (any case) as a watch, and reads the first one', () => {
    expect(verb('watch=true')).toBe('watch');
    expect(verb('watch=TRUE')).toBe('watch');
    expect(verb('watch=1')).toBe('watch');
    expect(verb('watch=yes')).toBe('watch');
    expect(verb('watch=false')).toBe('list');
    expect(verb('watch=False')).toBe('list');
    expect(verb('watch=0')).toBe('list');
    expect(verb('watch=false&watch=true')).toBe('list');
    expect(verb('watch=true&watch=false')).toBe('watch');
    expect(verb('limit=10')).toBe('list');
  });
});

describe('fieldSelector metadata.name sets the name of list and watch (kube TestSelectorParsing)', () => {
  const name = (method: string, url: string) => {
    const a = requestAttributes(method, url);
    return a.isResourceRequest ? { verb: a.verb, name: a.name } : undefined;
  };
  it('on list and watch', () => {
    expect(name('GET', '/apis/group/version/resource?fieldSelector=metadata.name=name1')).toEqual({ verb: 'list', name: 'name1' });
    expect(name('GET', '/apis/group/version/resource?watch=true&fieldSelector=metadata.name=name1')).toEqual({ verb: 'watch', name: 'name1' });
    expect(name('GET', `${NS}/websites?fieldSelector=metadata.name%3Dkubia&watch=1`)).toEqual({ verb: 'watch', name: 'kubia' });
    expect(name('GET', `${NS}/websites?fieldSelector=metadata.name%3D%3Dkubia`)).toEqual({ verb: 'list', name: 'kubia' });
    expect(name('GET', `${NS}/websites?fieldSelector=metadata.namespace%3Ddefault,metadata.name%3Dkubia`)).toEqual({ verb: 'list', name: 'kubia' });
  });

  it('not for other fields, other operators or other verbs', () => {
    expect(name('GET', '/apis/group/version/resource?fieldSelector=foo=bar&labelSelector=baz=qux')).toEqual({ verb: 'list', name: '' });
    expect(name('GET', `${NS}/websites?fieldSelector=metadata.name!%3Dkubia`)).toEqual({ verb: 'list', name: '' });
    expect(name('GET', `${NS}/websites?fieldSelector=metadata.namespace%3Dkubia`)).toEqual({ verb: 'list', name: '' });
    expect(name('GET', `${NS}/websites?labelSelector=metadata.name%3Dkubia`)).toEqual({ verb: 'list', name: '' });
    // deletecollection keeps no name (kube only reads the selector for a get without a name).
    expect(name('DELETE', `${NS}/websites?fieldSelector=metadata.name%3Dkubia`)).toEqual({ verb: 'deletecollection', name: '' });
    // A name in the path wins over the selector.
    expect(name('GET', '/apis/group/version/resource/name?fieldSelector=metadata.name=other')).toEqual({ verb: 'get', name: 'name' });
    // The deprecated watch prefix does not read the selector.
    expect(name('GET', '/apis/group/version/watch/resource?fieldSelector=metadata.name=foo')).toEqual({ verb: 'watch', name: '' });
    expect(name('GET', '/apis/group/version/watch/resource/name?fieldSelector=metadata.name=foo')).toEqual({ verb: 'watch', name: 'name' });
  });

  it('reads the first fieldSelector parameter', () => {
    expect(name('GET', '/apis/group/version/resource?fieldSelector=metadata.name=foo&fieldSelector=metadata.name=bar')).toEqual({ verb: 'list', name: 'foo' });
  });

  it('ignores a name that is not a valid path segment (path.IsValidPathSegmentName)', () => {
    for (const bad of ['..', '.', 'a%2Fb', 'a%25b']) {
      expect(name('GET', `${NS}/websites?fieldSelector=metadata.name%3D${bad}`), bad).toEqual({ verb: 'list', name: '' });
    }
    expect(name('GET', `${NS}/websites?fieldSelector=metadata.name%3D`)).toEqual({ verb: 'list', name: '' });
  });

  // Kube decodes the selector with fields.ParseSelector inside ParameterCodec.DecodeParameters; when decoding fails the
  // request keeps no name (requestinfo.go: "An error in parsing request will result in default to list and not
  // setting name field"). These cases show where request-info.ts's own exactName differs; see the report. They are
  // expected to fail until it is fixed (then drop `.fails`).
  const deviations: [string, string, string][] = [
    ['invalid selector with metadata.name (kube requestinfo_test.go case)', 'fieldSelector=metadata.name=name1,foo', ''],
    ['unescaped = in the value is a parse error', 'fieldSelector=metadata.name%3Da%3Db', ''],
    ['unknown escape in the value is a parse error', 'fieldSelector=metadata.name%3Da%5Cxb', ''],
    ['an escaped comma is part of the value', 'fieldSelector=metadata.name%3Da%5C%2Cb', 'a,b'],
    ['no whitespace trimming around the field', 'fieldSelector=%20metadata.name%3Dfoo', ''],
    ['terms are sorted before the first metadata.name is taken', 'fieldSelector=metadata.name%3Db,metadata.name%3Da', 'a'],
    ['any other undecodable list option drops the name', 'limit=abc&fieldSelector=metadata.name%3Dfoo', ''],
  ];
  for (const [title, query, want] of deviations) {
    it(`${title}`, () => {
      expect(requestAttributes('GET', `${NS}/websites?${query}`)).toMatchObject({ verb: 'list', name: want });
    });
  }
});

describe('non-resource requests', () => {
  const nonResource = (method: string, url: string) => ({ isResourceRequest: false, verb: method.toLowerCase(), path: url.split('?')[0] });
  const cases: [string, string][] = [
    ['GET', '/'],
    ['GET', ''],
    ['GET', '/api'],
    ['GET', '/api/v1'],
    ['GET', '/api/version/'],
    ['GET', '/apis'],
    ['GET', `/apis/${G}`],
    // A group version is discovery, not a resource: kube needs four segments under /apis.
    ['GET', `/apis/${G}/${V}`],
    ['GET', `/apis/${G}/${V}/`],
    ['GET', '/apis/group/version/'],
    ['GET', '/apis/version/resource'],
    ['GET', '/badprefix/version/resource'],
    ['GET', '/not-api/version/resource'],
    ['GET', '/healthz'],
    ['GET', '/readyz?verbose'],
    ['GET', '/openapi/v2'],
    ['GET', `/openapi/v3/apis/${G}/${V}?hash=abc`],
    ['GET', '/version'],
    ['GET', '/metrics'],
    ['POST', '/apis'],
    ['HEAD', '/'],
  ];
  for (const [method, url] of cases) {
    it(`${method} ${url || '(empty)'}`, () => {
      expect(requestAttributes(method, url)).toEqual(nonResource(method, url));
    });
  }
});
