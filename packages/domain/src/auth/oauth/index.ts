export { githubProfile } from './github-adapter.ts';
export * from './identity-view.ts';
export * from './link-identity.ts';
export * from './oauth-callback.ts';
export * from './oauth-requests.ts';
export * from './provider.ts';
export * from './registry.ts';
export * from './return-url.ts';
export { signInWithProfile } from './sign-in-with-profile.ts';
