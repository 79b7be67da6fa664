/**
 * Which engine answers on the API port. Xray-core and v2ray-core 4.x speak the same wire
 * format under different proto packages (`xray.app.stats.command` vs
 * `v2ray.core.app.stats.command`): the gRPC paths and every TypedMessage `type` string carry
 * that prefix, so one set of generated codecs (written under Xray's `xray.` names) serves both
 * once the names are re-prefixed.
 */

export type EngineFlavour = 'xray' | 'v2ray';

const PREFIX: Record<EngineFlavour, string> = { xray: 'xray.', v2ray: 'v2ray.core.' };

/** The engine's proto package prefix: `xray.` for Xray, `v2ray.core.` for v2ray-core 4.x. */
export function packagePrefixOf(flavour: EngineFlavour): string {
  return PREFIX[flavour];
}

/** The name the generated code gives (`xray.proxy.vmess.Account`) under another prefix. */
export function reprefix(generatedName: string, prefix: string): string {
  if (!generatedName.startsWith(PREFIX.xray)) throw new Error(`not an engine proto name: ${generatedName}`);
  return prefix + generatedName.slice(PREFIX.xray.length);
}

/** A generated service definition whose gRPC paths (`/<fullName>/<Method>`) use `prefix`. */
export function withPrefix<D extends { fullName: string }>(definition: D, prefix: string): Omit<D, 'fullName'> & { fullName: string } {
  return { ...definition, fullName: reprefix(definition.fullName, prefix) };
}
