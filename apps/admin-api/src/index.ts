export { AGENT_FILES_PATH, type AgentRelease, readAgentRelease, registerAgentFiles } from './agent-files.ts';
export { ADMIN_BASE, type AdminApi, createAdminApi, mountAdminApi } from './app.ts';
export { ADMIN_WEB_PATH, registerAdminWeb } from './web.ts';
