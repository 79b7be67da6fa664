/** The client address of a gRPC peer string ("ipv4:1.2.3.4:5", "ipv6:[::1]:5", "1.2.3.4:5"). */
export const peerIp = (peer: string): string | null => /^(?:ipv[46]:)?\[?([^\]]+?)\]?:\d+$/.exec(peer)?.[1] ?? null;
