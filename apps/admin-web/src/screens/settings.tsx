import {
  ActionIcon,
  Alert,
  Badge,
  Button,
  Card,
  Checkbox,
  Group,
  NumberInput,
  Select,
  Stack,
  Switch,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import type { AdminSchemas } from '@svc/api-client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Controller, useFieldArray, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { showProblem } from '../components/form-errors.ts';
import { notify } from '../components/notify.ts';
import { PageHeader } from '../components/page-header.tsx';
import { useCan } from '../me.tsx';

type LinkSettings = AdminSchemas['SubscriptionLinkSettings'];
type Rule = AdminSchemas['SubFormatRule'];
const FORMATS = ['base64', 'clash-meta', 'sing-box', 'xray-json', 'html'] as const;

/** Installation settings: what subscription links answer (with the User-Agent tester) and the outbound policy. Owners change them. */
export function SettingsScreen() {
  const { t } = useTranslation();
  const can = useCan();
  const link = useQuery({
    queryKey: ['settings', 'subscription-link'],
    queryFn: () => unwrap(api.GET('/api/v1/settings/subscription-link')),
  });
  return (
    <>
      <PageHeader title={t('settings.title')} subtitle={t('settings.subtitle')} />
      {!can.owner && (
        <Alert color="gray" mb="md" data-testid="read-only-note">
          {t('settings.ownersOnly')}
        </Alert>
      )}
      {link.isError && <Alert color="red">{link.error.message}</Alert>}
      {link.data && <LinkSettingsForm settings={link.data} readOnly={!can.owner} />}
      <OutboundCard readOnly={!can.owner} />
    </>
  );
}

interface Values {
  title: string;
  update_interval_hours: number | string;
  support_url: string;
  web_page_url: string;
  format_rules: Rule[];
}

function LinkSettingsForm({ settings, readOnly }: { settings: LinkSettings; readOnly: boolean }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const form = useForm<Values>({
    defaultValues: {
      title: settings.title ?? '',
      update_interval_hours: settings.update_interval_hours,
      support_url: settings.support_url ?? '',
      web_page_url: settings.web_page_url ?? '',
      format_rules: settings.format_rules,
    },
  });
  const rules = useFieldArray({ control: form.control, name: 'format_rules' });
  const { errors, isSubmitting, isDirty } = form.formState;
  const submit = form.handleSubmit(async (v) => {
    try {
      await unwrap(
        api.PATCH('/api/v1/settings/subscription-link', {
          body: {
            title: v.title.trim() || null,
            update_interval_hours: Number(v.update_interval_hours),
            support_url: v.support_url.trim() || null,
            web_page_url: v.web_page_url.trim() || null,
            format_rules: v.format_rules,
          },
        }),
      );
      await queryClient.invalidateQueries({ queryKey: ['settings'] });
      form.reset(v);
      notify(t('common.saved'));
    } catch (err) {
      const message = showProblem(err, form.setError, ['title', 'update_interval_hours', 'support_url', 'web_page_url']);
      const ruleErrors = Object.entries((err as { problem?: { errors?: Record<string, string> } }).problem?.errors ?? {}).filter(([k]) =>
        k.startsWith('format_rules'),
      );
      form.setError('root', { message: [message, ...ruleErrors.map(([k, v]) => `${k}: ${v}`)].filter(Boolean).join('; ') });
    }
  });
  const draft = form.watch('format_rules');
  return (
    <Card withBorder mb="md">
      <Title order={3} size="h5" mb="sm">
        {t('settings.linkTitle')}
      </Title>
      <form onSubmit={submit} noValidate>
        <fieldset disabled={readOnly} style={{ border: 0, padding: 0, margin: 0 }}>
          <Stack gap="sm">
            <Group grow align="flex-start">
              <TextInput
                label={t('settings.profileTitle')}
                description={t('settings.profileTitleHint')}
                error={errors.title?.message}
                {...form.register('title')}
              />
              <Controller
                control={form.control}
                name="update_interval_hours"
                render={({ field }) => (
                  <NumberInput
                    label={t('settings.interval')}
                    description={t('settings.intervalHint')}
                    min={1}
                    max={168}
                    value={field.value}
                    onChange={field.onChange}
                    error={errors.update_interval_hours?.message}
                  />
                )}
              />
            </Group>
            <Group grow align="flex-start">
              <TextInput
                type="url"
                label={t('settings.supportUrl')}
                error={errors.support_url?.message}
                {...form.register('support_url')}
              />
              <TextInput
                type="url"
                label={t('settings.webPageUrl')}
                description={t('settings.webPageUrlHint')}
                error={errors.web_page_url?.message}
                {...form.register('web_page_url')}
              />
            </Group>
            <Text fw={600} size="sm">
              {t('settings.rules')}
            </Text>
            <Text size="xs" c="dimmed">
              {t('settings.rulesHint')}
            </Text>
            {rules.fields.map((field, i) => (
              <Group key={field.id} gap="xs" wrap="nowrap" align="flex-end" data-testid="format-rule">
                <TextInput
                  style={{ flex: 1 }}
                  label={t('settings.pattern', { n: i + 1 })}
                  className="svc-mono"
                  dir="ltr"
                  {...form.register(`format_rules.${i}.user_agent` as const, { required: t('common.required') })}
                />
                <Controller
                  control={form.control}
                  name={`format_rules.${i}.format` as const}
                  render={({ field: f }) => (
                    <Select
                      w={140}
                      label={t('settings.format')}
                      allowDeselect={false}
                      value={f.value}
                      onChange={(v) => f.onChange(v ?? 'base64')}
                      data={[...FORMATS]}
                    />
                  )}
                />
                {!readOnly && (
                  <>
                    <ActionIcon
                      variant="default"
                      size="lg"
                      aria-label={t('settings.moveUp', { n: i + 1 })}
                      disabled={i === 0}
                      onClick={() => rules.move(i, i - 1)}
                    >
                      ↑
                    </ActionIcon>
                    <ActionIcon variant="default" size="lg" aria-label={t('settings.remove', { n: i + 1 })} onClick={() => rules.remove(i)}>
                      ×
                    </ActionIcon>
                  </>
                )}
              </Group>
            ))}
            {!readOnly && (
              <Group>
                <Button variant="default" size="xs" onClick={() => rules.append({ user_agent: '', format: 'base64' })}>
                  {t('settings.addRule')}
                </Button>
              </Group>
            )}
            {errors.root?.message && (
              <Alert color="red" role="alert">
                {errors.root.message}
              </Alert>
            )}
            {!readOnly && (
              <Group justify="flex-end">
                <Button type="submit" loading={isSubmitting} disabled={!isDirty}>
                  {t('common.save')}
                </Button>
              </Group>
            )}
          </Stack>
        </fieldset>
      </form>
      <UserAgentTester rules={draft} />
    </Card>
  );
}

/** Paste a User-Agent: the format GET /sub/{token} would answer, under the rules as they stand in the form. */
function UserAgentTester({ rules }: { rules: Rule[] }) {
  const { t } = useTranslation();
  const [ua, setUa] = useState('');
  const [browser, setBrowser] = useState(false);
  const [debounced] = useDebouncedValue({ ua, browser, rules: JSON.stringify(rules) }, 250);
  const result = useQuery({
    queryKey: ['settings', 'preview', debounced],
    queryFn: () =>
      unwrap(
        api.POST('/api/v1/settings/subscription-link/preview', {
          body: {
            user_agent: debounced.ua,
            ...(debounced.browser ? { accept: 'text/html' } : {}),
            format_rules: JSON.parse(debounced.rules) as Rule[],
          },
        }),
      ),
    enabled: debounced.ua.length > 0,
    retry: false,
  });
  return (
    <Stack gap="xs" mt="lg" data-testid="ua-tester">
      <Text fw={600} size="sm">
        {t('settings.tester')}
      </Text>
      <Group align="flex-end">
        <TextInput
          style={{ flex: 1 }}
          label={t('settings.userAgent')}
          placeholder="clash-verge/v2.2.3"
          value={ua}
          onChange={(e) => setUa(e.currentTarget.value)}
          dir="ltr"
        />
        <Checkbox label={t('settings.asBrowser')} checked={browser} onChange={(e) => setBrowser(e.currentTarget.checked)} />
      </Group>
      {result.data && (
        <Text size="sm" role="status" data-testid="ua-result">
          <Badge variant="dot" color="brand" mr="xs">
            {result.data.format}
          </Badge>
          {result.data.reason === 'rule'
            ? t('settings.byRule', { n: (result.data.rule_index ?? 0) + 1 })
            : result.data.reason === 'browser'
              ? t('settings.byBrowser')
              : t('settings.byFallback')}
        </Text>
      )}
      {result.isError && (
        <Text size="sm" c="red" role="alert">
          {result.error.message}
        </Text>
      )}
    </Stack>
  );
}

function OutboundCard({ readOnly }: { readOnly: boolean }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const outbound = useQuery({ queryKey: ['settings', 'outbound'], queryFn: () => unwrap(api.GET('/api/v1/settings/outbound')) });
  const save = useMutation({
    mutationFn: (allow: boolean) => unwrap(api.PATCH('/api/v1/settings/outbound', { body: { allow_private_networks: allow } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['settings', 'outbound'] }),
    onError: (e) => notify(e.message, 'red'),
  });
  if (!outbound.data) return null;
  const fixed = outbound.data.set_by === 'configuration';
  return (
    <Card withBorder>
      <Title order={3} size="h5" mb="sm">
        {t('settings.outboundTitle')}
      </Title>
      <Switch
        label={t('settings.allowPrivate')}
        description={fixed ? t('settings.setByConfiguration') : t('settings.allowPrivateHint')}
        checked={outbound.data.allow_private_networks}
        disabled={readOnly || fixed || save.isPending}
        onChange={(e) => save.mutate(e.currentTarget.checked)}
      />
    </Card>
  );
}
