declare const sentry: {
  whoami(): Promise<unknown>;
  update_issue(params?: {
    organizationSlug?: string;
    regionUrl?: string | null;
    issueId?: string;
    issueUrl?: string;
    status?: "resolved" | "resolvedInNextRelease" | "unresolved" | "ignored";
    assignedTo?: string;
    ignoreMode?: "untilEscalating" | "forever" | "forDuration" | "untilOccurrenceCount" | "untilUserCount";
    ignoreDurationMinutes?: number;
    ignoreCount?: number;
    ignoreWindowMinutes?: number;
    ignoreUserCount?: number;
    ignoreUserWindowMinutes?: number;
    reason?: string;
  }): Promise<unknown>;
  search_issue_events(params?: {
    organizationSlug?: string | null;
    issueId?: string;
    issueUrl?: string;
    query?: string;
    sort?: string;
    statsPeriod?: string;
    projectSlug?: string | null;
    regionUrl?: string | null;
    limit?: number;
    includeExplanation?: boolean;
  }): Promise<unknown>;
  get_sentry_resource(params?: {
    url?: string;
    resourceType?: "issue" | "event" | "trace" | "span" | "ai_conversation" | "breadcrumbs" | "replay" | "snapshot" | "snapshotImage";
    resourceId?: string;
    organizationSlug?: string;
  }): Promise<unknown>;
  search_docs(params: {
    query: string;
    maxResults?: number;
    guide?: "javascript" | "python" | "java" | "dotnet" | "go" | "php" | "ruby" | "android" | "apple" | "unity" | "unreal" | "rust" | "elixir" | "kotlin" | "native" | "dart" | "godot" | "nintendo-switch" | "playstation" | "powershell" | "react-native" | "xbox" | "javascript/nextjs" | "javascript/react" | "javascript/gatsby" | "javascript/remix" | "javascript/vue" | "javascript/angular" | "javascript/hono" | "javascript/svelte" | "javascript/express" | "javascript/fastify" | "javascript/astro" | "javascript/bun" | "javascript/capacitor" | "javascript/cloudflare" | "javascript/connect" | "javascript/cordova" | "javascript/deno" | "javascript/electron" | "javascript/ember" | "javascript/nuxt" | "javascript/solid" | "javascript/solidstart" | "javascript/sveltekit" | "javascript/tanstack-react" | "javascript/wasm" | "javascript/node" | "javascript/koa" | "javascript/nestjs" | "javascript/hapi" | "python/django" | "python/flask" | "python/fastapi" | "python/celery" | "python/tornado" | "python/pyramid" | "python/aiohttp" | "python/anthropic" | "python/airflow" | "python/aws-lambda" | "python/boto3" | "python/bottle" | "python/chalice" | "python/dramatiq" | "python/falcon" | "python/langchain" | "python/litestar" | "python/logging" | "python/loguru" | "python/openai" | "python/quart" | "python/ray" | "python/redis" | "python/rq" | "python/sanic" | "python/sqlalchemy" | "python/starlette" | "dart/flutter" | "dotnet/aspnetcore" | "dotnet/maui" | "dotnet/wpf" | "dotnet/winforms" | "dotnet/aspnet" | "dotnet/aws-lambda" | "dotnet/azure-functions" | "dotnet/blazor-webassembly" | "dotnet/entityframework" | "dotnet/google-cloud-functions" | "dotnet/extensions-logging" | "dotnet/log4net" | "dotnet/nlog" | "dotnet/serilog" | "dotnet/uwp" | "dotnet/xamarin" | "java/spring" | "java/spring-boot" | "java/android" | "java/jul" | "java/log4j2" | "java/logback" | "java/servlet" | "go/echo" | "go/fasthttp" | "go/fiber" | "go/gin" | "go/http" | "go/iris" | "go/logrus" | "go/negroni" | "go/slog" | "go/zerolog" | "php/laravel" | "php/symfony" | "ruby/delayed_job" | "ruby/rack" | "ruby/rails" | "ruby/resque" | "ruby/sidekiq" | "android/kotlin" | "apple/ios" | "apple/macos" | "apple/watchos" | "apple/tvos" | "apple/visionos" | "kotlin/multiplatform" | null;
  }): Promise<unknown>;
};
