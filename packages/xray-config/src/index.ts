/**
 * @svc/xray-config: renders a NodeConfig (the wire contract's desired node configuration) into
 * Xray-core's JSON configuration, given where the agent wrote each certificate's PEM files.
 * See README.md for the layout choices and the Xray documentation they rest on.
 */
export * from './render.ts';
export { isShadowsocks2022 } from './render-inbound.ts';
export * from './xray-json.ts';
