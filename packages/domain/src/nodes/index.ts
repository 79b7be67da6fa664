// Use cases of this feature, exported for every surface.
export * from './create-node.ts';
export * from './delete-node.ts';
export * from './enroll-node.ts';
export * from './issue-enroll-token.ts';
export * from './node-fields.ts';
export * from './node-ports.ts';
export * from './node-traffic.ts';
export * from './node-view.ts';
export * from './read-nodes.ts';
export * from './update-node.ts';
