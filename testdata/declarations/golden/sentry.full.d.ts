declare const sentry: {
  /**
   * Identify the authenticated user in Sentry.
   *
   * Use this tool when you need to:
   * - Get the user's name and email address.
   */
  whoami(): Promise<unknown>;
  /**
   * Update a Sentry issue's status or assignment.
   *
   * Use this to resolve, reopen, assign, or ignore an issue.
   *
   * <examples>
   * ```
   * update_issue(organizationSlug='my-org', issueId='PROJECT-123', status='resolved')
   * update_issue(organizationSlug='my-org', issueId='PROJECT-123', assignedTo='user:123456')
   * update_issue(organizationSlug='my-org', issueId='PROJECT-123', status='ignored')
   * update_issue(organizationSlug='my-org', issueId='PROJECT-123', status='ignored', ignoreMode='forever')
   * update_issue(organizationSlug='my-org', issueId='PROJECT-123', status='ignored', ignoreMode='untilOccurrenceCount', ignoreCount=100, ignoreWindowMinutes=60)
   * update_issue(organizationSlug='my-org', issueId='PROJECT-123', status='ignored', reason='Ignoring because this is expected noise from the staging deploy')
   * ```
   * </examples>
   *
   * <hints>
   * - Provide `issueUrl` or `organizationSlug` + `issueId`.
   * - At least one of `status` or `assignedTo` is required.
   * - `assignedTo` format: `user:ID` or `team:ID_OR_SLUG`.
   * - Use `whoami` to find your user ID for self-assignment.
   * - Status values: `resolved`, `resolvedInNextRelease`, `unresolved`, `ignored`.
   * - `status='ignored'` defaults to `ignoreMode='untilEscalating'`.
   * - Ignore modes: `untilEscalating`, `forever`, `forDuration`, `untilOccurrenceCount`, `untilUserCount`.
   * - Matching ignore inputs are `ignoreDurationMinutes`, `ignoreCount` + optional `ignoreWindowMinutes`, or `ignoreUserCount` + optional `ignoreUserWindowMinutes`.
   * - To switch an already ignored issue between `untilEscalating`, `forever`, and condition-based ignore modes, first set `status='unresolved'`, then ignore it again with the new rule.
   * - `reason` is optional. When provided, it will be posted as a comment on the issue's activity feed explaining why the action was taken.
   * </hints>
   */
  update_issue(params?: {
    /** The organization's slug. You can find a existing list of organizations you have access to using the `find_organizations()` tool. */
    organizationSlug?: string;
    /** The region URL for the organization you're querying, if known. For Sentry's Cloud Service (sentry.io), this is typically the region-specific URL like 'https://us.sentry.io'. For self-hosted Sentry installations, this parameter is usually not needed and should be omitted. You can find the correct regionUrl from the organization details using the `find_organizations()` tool. */
    regionUrl?: string | null;
    /** The Issue ID. e.g. `PROJECT-1Z43` */
    issueId?: string;
    /** The URL of the issue. e.g. https://my-organization.sentry.io/issues/PROJECT-1Z43 */
    issueUrl?: string;
    /** The new status for the issue. Valid values are 'resolved', 'resolvedInNextRelease', 'unresolved', and 'ignored'. */
    status?: "resolved" | "resolvedInNextRelease" | "unresolved" | "ignored";
    /** The assignee in format 'user:ID' or 'team:ID_OR_SLUG' where ID is numeric. Example: 'user:123456', 'team:789', or 'team:my-team-slug'. Use the whoami tool to find your user ID. */
    assignedTo?: string;
    /** How ignored issues should behave. Use 'untilEscalating' to match the Sentry UI default, 'forever' for a permanent ignore, 'forDuration' with ignoreDurationMinutes, 'untilOccurrenceCount' with ignoreCount and optional ignoreWindowMinutes, or 'untilUserCount' with ignoreUserCount and optional ignoreUserWindowMinutes. */
    ignoreMode?: "untilEscalating" | "forever" | "forDuration" | "untilOccurrenceCount" | "untilUserCount";
    /** How many minutes to ignore the issue when ignoreMode is 'forDuration'. */
    ignoreDurationMinutes?: number;
    /** How many times the issue must occur before it stops being ignored when ignoreMode is 'untilOccurrenceCount'. */
    ignoreCount?: number;
    /** Optional time window in minutes for ignoreCount. If omitted, Sentry counts all future occurrences. */
    ignoreWindowMinutes?: number;
    /** How many users must be affected before the issue stops being ignored when ignoreMode is 'untilUserCount'. */
    ignoreUserCount?: number;
    /** Optional time window in minutes for ignoreUserCount. If omitted, Sentry counts all future affected users. */
    ignoreUserWindowMinutes?: number;
    /** Optional reason for taking this action. When provided, it will be posted as a comment on the issue's activity feed. */
    reason?: string;
  }): Promise<unknown>;
  /**
   * Search and filter events within a specific issue.
   *
   * Provide `query` as natural language or Sentry event search syntax. When an embedded agent is configured, it fixes filters, fields, sort, and time range before running.
   *
   * The tool automatically constrains results to the specified issue.
   *
   * Common Query Filters:
   * - environment:production - Filter by environment
   * - release:1.0.0 - Filter by release version
   * - user.email:alice@example.com - Filter by user
   * - trace:TRACE_ID - Filter by trace ID
   *
   * For cross-issue searches use search_issues. For single issue or event details use get_sentry_resource.
   *
   * <examples>
   * search_issue_events(issueId='MCP-41', organizationSlug='my-org', query='from last hour')
   * search_issue_events(issueId='MCP-41', organizationSlug='my-org', query='environment:production')
   * search_issue_events(issueUrl='https://sentry.io/.../issues/123/', query='release:v1.0.0', statsPeriod='7d')
   * </examples>
   */
  search_issue_events(params?: {
    /** Organization slug. Required when using issueId. Not needed when using issueUrl. */
    organizationSlug?: string | null;
    /** Issue ID (e.g., 'MCP-41', 'PROJECT-123'). Requires organizationSlug. Alternatively, use issueUrl. */
    issueId?: string;
    /** Full Sentry issue URL (e.g., 'https://sentry.io/organizations/my-org/issues/123/'). Includes both organization and issue ID. */
    issueUrl?: string;
    /** Natural language or Sentry event search query syntax for filtering within the issue. */
    query?: string;
    /** Sort field (prefix with - for descending). Default: -timestamp */
    sort?: string;
    /** Initial time period hint: 1h, 24h, 7d, 14d, 30d, etc. */
    statsPeriod?: string;
    /** Project slug for better tag discovery. Optional - helps find project-specific tags. */
    projectSlug?: string | null;
    /** Sentry region URL. Optional - defaults to main region. */
    regionUrl?: string | null;
    /** Maximum number of events to return (1-100, default: 50) */
    limit?: number;
    /** Include explanation of how the query was translated or repaired */
    includeExplanation?: boolean;
  }): Promise<unknown>;
  /**
   * Fetch a Sentry resource by URL, or by resourceType plus resourceId.
   * Pass a Sentry URL directly when possible; the resource type is auto-detected.
   *
   * Supports issues, events, traces, spans, AI conversations, breadcrumbs, replays, preprod snapshots, and snapshot images.
   * Trace lookups return a condensed overview by default.
   *
   * AI Conversations: A conversation is a set of spans sharing the same gen_ai.conversation.id. Use resourceType='ai_conversation' with a conversation ID to fetch all spans for that conversation. To discover or list conversation IDs, use search_events with dataset='spans' and query='has:gen_ai.conversation.id'. Conversations are NOT issues — do not use search_issues for conversation queries.
   *
   * For preprod snapshot URLs (matching 'sentry.io/preprod/snapshots/'):
   * - Without ?selectedSnapshot=: returns the snapshot diff summary (changed, added, removed images)
   * - With ?selectedSnapshot=<image_file_name>: returns the image preview and metadata. Full-resolution snapshot image bytes are not available in this session.
   *
   * Resource IDs:
   * - span: <traceId>:<spanId>
   * - snapshot: <snapshotId>
   * - snapshotImage: <snapshotId>:<image_file_name>
   *
   * <examples>
   * get_sentry_resource(url='https://sentry.io/issues/PROJECT-123/')
   * get_sentry_resource(resourceType='issue', organizationSlug='my-org', resourceId='PROJECT-123')
   * get_sentry_resource(resourceType='span', organizationSlug='my-org', resourceId='<traceId>:<spanId>')
   * get_sentry_resource(resourceType='ai_conversation', organizationSlug='my-org', resourceId='conversation-123')
   * get_sentry_resource(url='https://sentry.sentry.io/preprod/snapshots/123/')
   * get_sentry_resource(url='https://sentry.sentry.io/preprod/snapshots/123/?selectedSnapshot=login_screen.png')
   * </examples>
   */
  get_sentry_resource(params?: {
    /** Sentry URL. The resource type is auto-detected from the URL pattern. */
    url?: string;
    /** Resource type. With a URL, can override the auto-detected type for breadcrumbs on an issue/event URL or for `trace` on a span-focused trace URL. Use `snapshot` with a snapshot artifact ID, or `snapshotImage` with `<snapshotId>:<image_file_name>`. */
    resourceType?: "issue" | "event" | "trace" | "span" | "ai_conversation" | "breadcrumbs" | "replay" | "snapshot" | "snapshotImage";
    /** Resource identifier: issue shortId (e.g., 'PROJECT-123'), event ID, trace ID, AI conversation ID, replay ID, snapshot artifact ID, `<snapshotId>:<image_file_name>` for snapshot image resources, or `traceId:spanId` for span resources. Required when not using a URL. */
    resourceId?: string;
    /** The organization's slug. You can find a existing list of organizations you have access to using the `find_organizations()` tool. */
    organizationSlug?: string;
  }): Promise<unknown>;
  /**
   * Search Sentry documentation for SDK setup, instrumentation, and configuration guidance.
   *
   * Use this tool when you need to:
   * - Set up Sentry SDK or framework integrations (Django, Flask, Express, Next.js, etc.)
   * - Configure features like performance monitoring, error sampling, or release tracking
   * - Implement custom instrumentation (spans, transactions, breadcrumbs)
   * - Configure data scrubbing, filtering, or sampling rules
   *
   * Returns snippets only. Use the Sentry tool `get_doc(path='...')` to fetch full documentation content.
   *
   * <examples>
   * ```
   * search_docs(query='Django setup configuration SENTRY_DSN', guide='python/django')
   * search_docs(query='source maps webpack upload', guide='javascript/nextjs')
   * ```
   * </examples>
   *
   * <hints>
   * - Use guide parameter to filter to specific technologies (e.g., 'javascript/nextjs')
   * - Include specific feature names like 'beforeSend', 'tracesSampleRate', 'SENTRY_DSN'
   * </hints>
   */
  search_docs(params: {
    /** The search query in natural language. Be specific about what you're looking for. */
    query: string;
    /** Maximum number of results to return (1-10) */
    maxResults?: number;
    /** Optional guide filter to limit search results to specific documentation sections. Use either a platform (e.g., 'javascript', 'python') or platform/guide combination (e.g., 'javascript/nextjs', 'python/django'). */
    guide?: "javascript" | "python" | "java" | "dotnet" | "go" | "php" | "ruby" | "android" | "apple" | "unity" | "unreal" | "rust" | "elixir" | "kotlin" | "native" | "dart" | "godot" | "nintendo-switch" | "playstation" | "powershell" | "react-native" | "xbox" | "javascript/nextjs" | "javascript/react" | "javascript/gatsby" | "javascript/remix" | "javascript/vue" | "javascript/angular" | "javascript/hono" | "javascript/svelte" | "javascript/express" | "javascript/fastify" | "javascript/astro" | "javascript/bun" | "javascript/capacitor" | "javascript/cloudflare" | "javascript/connect" | "javascript/cordova" | "javascript/deno" | "javascript/electron" | "javascript/ember" | "javascript/nuxt" | "javascript/solid" | "javascript/solidstart" | "javascript/sveltekit" | "javascript/tanstack-react" | "javascript/wasm" | "javascript/node" | "javascript/koa" | "javascript/nestjs" | "javascript/hapi" | "python/django" | "python/flask" | "python/fastapi" | "python/celery" | "python/tornado" | "python/pyramid" | "python/aiohttp" | "python/anthropic" | "python/airflow" | "python/aws-lambda" | "python/boto3" | "python/bottle" | "python/chalice" | "python/dramatiq" | "python/falcon" | "python/langchain" | "python/litestar" | "python/logging" | "python/loguru" | "python/openai" | "python/quart" | "python/ray" | "python/redis" | "python/rq" | "python/sanic" | "python/sqlalchemy" | "python/starlette" | "dart/flutter" | "dotnet/aspnetcore" | "dotnet/maui" | "dotnet/wpf" | "dotnet/winforms" | "dotnet/aspnet" | "dotnet/aws-lambda" | "dotnet/azure-functions" | "dotnet/blazor-webassembly" | "dotnet/entityframework" | "dotnet/google-cloud-functions" | "dotnet/extensions-logging" | "dotnet/log4net" | "dotnet/nlog" | "dotnet/serilog" | "dotnet/uwp" | "dotnet/xamarin" | "java/spring" | "java/spring-boot" | "java/android" | "java/jul" | "java/log4j2" | "java/logback" | "java/servlet" | "go/echo" | "go/fasthttp" | "go/fiber" | "go/gin" | "go/http" | "go/iris" | "go/logrus" | "go/negroni" | "go/slog" | "go/zerolog" | "php/laravel" | "php/symfony" | "ruby/delayed_job" | "ruby/rack" | "ruby/rails" | "ruby/resque" | "ruby/sidekiq" | "android/kotlin" | "apple/ios" | "apple/macos" | "apple/watchos" | "apple/tvos" | "apple/visionos" | "kotlin/multiplatform" | null;
  }): Promise<unknown>;
};
