export { DataTable, type DataTableProps, type SortState } from './data-table.tsx';
export { type DeviceSelf, deviceTitle } from './device-title.ts';
export { formatBytes, formatDate, formatDateTime, formatNumber, formatRelative } from './format.ts';
export { type CatalogLoader, changeLocale, directionOf, LOCALES, type LocaleCode, preferredLocale, setUpI18n } from './locales.ts';
export { QrCode } from './qr-code.tsx';
export { ColorSchemeControl, LanguageMenu, Shell } from './shell.tsx';
export { cssVariablesResolver, theme } from './theme.ts';
export { UsageChart, type UsageSeries } from './usage-chart.tsx';
