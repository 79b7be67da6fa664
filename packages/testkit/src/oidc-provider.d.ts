// oidc-provider ships no types; the test provider uses a few members only.
declare module 'oidc-provider' {
  const Provider: any;
  export default Provider;
}
