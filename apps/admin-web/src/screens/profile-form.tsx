import { Alert, Button, Checkbox, Divider, Group, Select, SimpleGrid, Stack, Text, TextInput } from '@mantine/core';
import type { AdminSchemas } from '@svc/api-client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { DeleteButton } from '../components/delete-button.tsx';
import { showProblem } from '../components/form-errors.ts';

type Profile = AdminSchemas['InboundProfile'];
type Body = AdminSchemas['CreateInboundProfile'];

const PROTOCOLS = ['vless', 'vmess', 'trojan', 'shadowsocks'] as const;
const NETWORKS = ['tcp', 'ws', 'grpc', 'httpupgrade', 'xhttp'] as const;
const SECURITIES = ['none', 'tls', 'reality'] as const;
const SS_METHODS = [
  '2022-blake3-aes-128-gcm',
  '2022-blake3-aes-256-gcm',
  'aes-128-gcm',
  'aes-256-gcm',
  'chacha20-ietf-poly1305',
  'xchacha20-ietf-poly1305',
];
const FINGERPRINTS = ['chrome', 'firefox', 'safari', 'ios', 'android', 'edge', '360', 'qq', 'random', 'randomized'];
const XHTTP_MODES = ['auto', 'packet_up', 'stream_up', 'stream_one'];

/** Flat form values; `toBody` shapes them into the typed request of the chosen protocol, transport and security. */
interface Values {
  name: string;
  protocol: (typeof PROTOCOLS)[number];
  vless_flow: string;
  shadowsocks_method: string;
  network: (typeof NETWORKS)[number];
  path: string;
  host: string;
  service_name: string;
  multi_mode: boolean;
  xhttp_mode: string;
  accept_proxy_protocol: boolean;
  security: (typeof SECURITIES)[number];
  certificate_id: string;
  server_names: string;
  alpn: string;
  min_version: string;
  reality_dest: string;
  fingerprint: string;
  short_ids: string;
  private_key: string;
  sniffing: boolean;
  block_bittorrent: boolean;
}

const list = (s: string) =>
  s
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);

function fromProfile(p?: Profile): Values {
  const s = p?.stream;
  return {
    name: p?.name ?? '',
    protocol: p?.protocol ?? 'vless',
    vless_flow: p?.vless_flow ?? '',
    shadowsocks_method: p?.shadowsocks_method ?? '2022-blake3-aes-128-gcm',
    network: s?.network ?? 'tcp',
    path: s?.ws?.path ?? s?.httpupgrade?.path ?? s?.xhttp?.path ?? '/',
    host: s?.httpupgrade?.host ?? s?.xhttp?.host ?? '',
    service_name: s?.grpc?.service_name ?? '',
    multi_mode: s?.grpc?.multi_mode ?? false,
    xhttp_mode: s?.xhttp?.mode ?? 'auto',
    accept_proxy_protocol: s?.tcp?.accept_proxy_protocol ?? false,
    security: s?.security ?? 'none',
    certificate_id: s?.tls?.certificate_id ?? '',
    server_names: (s?.tls?.server_names ?? s?.reality?.server_names ?? []).join(', '),
    alpn: s?.tls?.alpn ?? '',
    min_version: s?.tls?.min_version ?? '1.2',
    reality_dest: s?.reality?.dest ?? '',
    fingerprint: s?.reality?.fingerprint ?? 'chrome',
    short_ids: (s?.reality?.short_ids ?? []).join(', '),
    private_key: '',
    sniffing: p?.sniffing.enabled ?? true,
    block_bittorrent: p?.block_bittorrent ?? false,
  };
}

function toBody(v: Values): Body {
  const stream: Body['stream'] = { network: v.network, security: v.security };
  if (v.network === 'ws') stream.ws = { path: v.path, headers: {} };
  if (v.network === 'httpupgrade') stream.httpupgrade = { path: v.path, host: v.host };
  if (v.network === 'xhttp') stream.xhttp = { path: v.path, host: v.host, mode: v.xhttp_mode as 'auto' };
  if (v.network === 'grpc') stream.grpc = { service_name: v.service_name, multi_mode: v.multi_mode };
  if (v.network === 'tcp') stream.tcp = { accept_proxy_protocol: v.accept_proxy_protocol };
  if (v.security === 'tls') {
    stream.tls = {
      certificate_id: v.certificate_id,
      server_names: list(v.server_names),
      alpn: v.alpn,
      min_version: v.min_version as '1.2',
    };
  }
  if (v.security === 'reality') {
    stream.reality = {
      dest: v.reality_dest,
      server_names: list(v.server_names),
      fingerprint: v.fingerprint as 'chrome',
      ...(v.short_ids.trim() ? { short_ids: list(v.short_ids) } : {}),
      ...(v.private_key.trim() ? { private_key: v.private_key.trim() } : {}),
    };
  }
  return {
    name: v.name,
    protocol: v.protocol,
    vless_flow: v.protocol === 'vless' && v.vless_flow ? 'xtls-rprx-vision' : null,
    shadowsocks_method: v.protocol === 'shadowsocks' ? (v.shadowsocks_method as Body['shadowsocks_method']) : null,
    stream,
    sniffing: { enabled: v.sniffing },
    block_bittorrent: v.block_bittorrent,
  };
}

const FIELDS = ['name', 'protocol', 'vless_flow', 'shadowsocks_method', 'stream', 'sniffing', 'block_bittorrent'];

/** Create or edit a profile: only the fields of the chosen protocol, transport and security are shown. */
export function ProfileForm({ profile, onSaved }: { profile?: Profile; onSaved: () => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const form = useForm<Values>({ defaultValues: fromProfile(profile) });
  const { errors, isSubmitting } = form.formState;
  const [protocol, network, security] = form.watch(['protocol', 'network', 'security']);
  const certificates = useQuery({
    queryKey: ['certificates', 'all'],
    queryFn: () => unwrap(api.GET('/api/v1/certificates', { params: { query: { limit: 200 } } })),
    enabled: security === 'tls',
  });
  const save = useMutation({
    mutationFn: (body: Body) =>
      profile
        ? unwrap(api.PATCH('/api/v1/inbound-profiles/{id}', { params: { path: { id: profile.id } }, body }))
        : unwrap(api.POST('/api/v1/inbound-profiles', { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['inbound-profiles'] }),
  });
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/inbound-profiles/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['inbound-profiles'] });
      onSaved();
    },
  });
  const submit = form.handleSubmit(async (values) => {
    try {
      await save.mutateAsync(toBody(values));
      onSaved();
    } catch (err) {
      const message = showProblem(err, form.setError, FIELDS);
      if (message) form.setError('root', { message });
      // Errors under stream.* are shown at the form's foot with their field names.
      const streamErrors = Object.entries((err as { problem?: { errors?: Record<string, string> } }).problem?.errors ?? {}).filter(([k]) =>
        k.startsWith('stream'),
      );
      if (streamErrors.length) form.setError('root', { message: streamErrors.map(([k, v]) => `${k}: ${v}`).join('; ') });
    }
  });
  const select = (name: keyof Values, label: string, data: Array<string | { value: string; label: string }>, extra?: object) => (
    <Controller
      control={form.control}
      name={name}
      render={({ field }) => (
        <Select
          label={label}
          data={data}
          value={String(field.value)}
          onChange={(v) => field.onChange(v ?? '')}
          allowDeselect={false}
          {...extra}
        />
      )}
    />
  );
  const check = (name: keyof Values, label: string) => (
    <Controller
      control={form.control}
      name={name}
      render={({ field }) => (
        <Checkbox label={label} checked={Boolean(field.value)} onChange={(e) => field.onChange(e.currentTarget.checked)} />
      )}
    />
  );
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          label={t('fields.name')}
          required
          error={errors.name?.message}
          {...form.register('name', { required: t('common.required') })}
        />
        <SimpleGrid cols={{ base: 1, xs: 2 }}>
          {select('protocol', t('profiles.protocol'), [...PROTOCOLS])}
          {protocol === 'vless' &&
            select('vless_flow', t('profiles.flow'), [
              { value: '', label: t('profiles.flowNone') },
              { value: 'xtls-rprx-vision', label: 'xtls-rprx-vision' },
            ])}
          {protocol === 'shadowsocks' && select('shadowsocks_method', t('profiles.method'), SS_METHODS)}
        </SimpleGrid>
        <Divider label={t('profiles.transport')} labelPosition="left" />
        <SimpleGrid cols={{ base: 1, xs: 2 }}>
          {select('network', t('profiles.network'), [...NETWORKS])}
          {(network === 'ws' || network === 'httpupgrade' || network === 'xhttp') && (
            <TextInput label={t('profiles.path')} {...form.register('path')} />
          )}
          {(network === 'httpupgrade' || network === 'xhttp') && <TextInput label={t('profiles.host')} {...form.register('host')} />}
          {network === 'xhttp' && select('xhttp_mode', t('profiles.xhttpMode'), XHTTP_MODES)}
          {network === 'grpc' && <TextInput label={t('profiles.serviceName')} {...form.register('service_name')} />}
        </SimpleGrid>
        {network === 'grpc' && check('multi_mode', t('profiles.multiMode'))}
        {network === 'tcp' && check('accept_proxy_protocol', t('profiles.proxyProtocol'))}
        <Divider label={t('profiles.security')} labelPosition="left" />
        {select(
          'security',
          t('profiles.security'),
          SECURITIES.map((s) => ({ value: s, label: t(`profiles.securities.${s}`) })),
        )}
        {security === 'tls' && (
          <SimpleGrid cols={{ base: 1, xs: 2 }}>
            {select(
              'certificate_id',
              t('profiles.certificate'),
              (certificates.data?.items ?? []).map((c) => ({ value: c.id, label: c.name ?? c.domains.join(', ') })),
              { required: true, nothingFoundMessage: t('profiles.noCertificates') },
            )}
            <TextInput label={t('profiles.serverNames')} description={t('profiles.listHint')} {...form.register('server_names')} />
            <TextInput label={t('profiles.alpn')} description={t('profiles.alpnHint')} {...form.register('alpn')} />
            {select('min_version', t('profiles.minVersion'), ['1.0', '1.1', '1.2', '1.3'])}
          </SimpleGrid>
        )}
        {security === 'reality' && (
          <>
            <SimpleGrid cols={{ base: 1, xs: 2 }}>
              <TextInput label={t('profiles.realityDest')} placeholder="www.example.com:443" required {...form.register('reality_dest')} />
              <TextInput
                label={t('profiles.serverNames')}
                description={t('profiles.listHint')}
                required
                {...form.register('server_names')}
              />
              {select('fingerprint', t('profiles.fingerprint'), FINGERPRINTS)}
              <TextInput label={t('profiles.shortIds')} description={t('profiles.shortIdsHint')} {...form.register('short_ids')} />
            </SimpleGrid>
            <TextInput
              label={t('profiles.privateKey')}
              description={profile?.stream.reality?.has_private_key ? t('profiles.privateKeyKept') : t('profiles.privateKeyGenerated')}
              autoComplete="off"
              spellCheck={false}
              {...form.register('private_key')}
            />
            {profile?.stream.reality?.public_key && (
              <Text size="sm">
                {t('profiles.publicKey')}: <span className="svc-mono">{profile.stream.reality.public_key}</span>
              </Text>
            )}
          </>
        )}
        <Divider />
        <Group>
          {check('sniffing', t('profiles.sniffing'))}
          {check('block_bittorrent', t('profiles.blockBittorrent'))}
        </Group>
        {errors.root && (
          <Alert color="red" role="alert">
            {errors.root.message}
          </Alert>
        )}
        <Group justify="space-between">
          {profile ? (
            <DeleteButton
              title={t('profiles.deleteTitle', { name: profile.name })}
              body={t('profiles.deleteBody')}
              onConfirm={() => remove.mutate(profile.id)}
            />
          ) : (
            <span />
          )}
          <Button type="submit" loading={isSubmitting}>
            {profile ? t('common.save') : t('common.create')}
          </Button>
        </Group>
        {remove.isError && <Alert color="red">{remove.error.message}</Alert>}
      </Stack>
    </form>
  );
}
