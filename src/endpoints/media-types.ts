/**
 * @module endpoints/media-types
 * The media type lists kube-apiserver names for a custom resource (its codec factory's serializers), which our 406
 * and 415 messages repeat word for word, and the body types this server really decodes.
 */

/** KUBE_MEDIA_TYPES: what a CRD's 406 (`only the following media types are accepted: …`) and a body's 415 list. */
export const KUBE_MEDIA_TYPES: readonly string[] = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

/** KUBE_WATCH_MEDIA_TYPES: what a watch's 406 lists (the serializers that can stream; YAML cannot). */
export const KUBE_WATCH_MEDIA_TYPES: readonly string[] = ['application/json;stream=watch', 'application/vnd.kubernetes.protobuf;stream=watch'];

/** BODY_MEDIA_TYPES: the request body types decoded here, which a 415's `Accept` header lists. */
export const BODY_MEDIA_TYPES: readonly string[] = ['application/json', 'application/yaml'];
