/**
 * @module storage/etcd-defaults
 * The etcd backend's defaults that flag parsing and the manifests need, apart from the client (which loads gRPC).
 */

/**
 * DEFAULT_ETCD_PREFIX is --etcd-prefix's default: a prefix of our own inside kube-apiserver's `/registry`, as
 * sample-apiserver's `/registry/<group>`, so an etcd shared with kube-apiserver keeps both sets of keys apart.
 */
export const DEFAULT_ETCD_PREFIX = '/registry/website-apiserver';
