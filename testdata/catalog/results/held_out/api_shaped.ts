/**
 * Writes the API-shaped part of the held-out corpus of observed result shapes (answers the render
 * rules were not fitted on): `github.json` (the minimal types the GitHub MCP server answers with, Go
 * structs whose empty fields are left out), `slack.json` (Slack Web API responses, which
 * server-slack passes through as JSON text, for its real `tools/list` in `tools/slack.json`),
 * `stripe.json` (Stripe API objects), `notion.json` (Notion API page, user and block objects),
 * `jira.json` (Jira REST issue and search objects) and `time.json` (mcp-server-time's answers). The
 * tools of github, notion and time are the real `tools/list` entries of
 * `../shared/cases/tools/`; those of stripe and jira are written here after the servers' tool names.
 * Each answer follows the object shapes of the public API reference of its service, with the
 * variation real answers have: empty lists, `null` fields, fields left out, objects of another kind
 * under the same name, a successful answer that reports nothing done. Deterministic (a fixed seed).
 *
 *   deno run -A testdata/catalog/results/held_out/api_shaped.ts
 */
const OUT = new URL(".", import.meta.url).pathname;
const SHARED = new URL("../../../../../shared/cases/tools/", import.meta.url).pathname;

let seed = 2323;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const int = (n: number) => Math.floor(rand() * n);
const hex = (n: number) => Array.from({ length: n }, () => "0123456789abcdef"[int(16)]).join("");
const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
const text = (value: unknown) => ({ content: [{ type: "text", text: JSON.stringify(value, null, 2) }] });
/** Drops the keys whose value is `undefined` (a Go `omitempty` field, a field an object lacks). */
const clean = <T extends Record<string, unknown>>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
const maybe = <T>(p: number, v: () => T): T | undefined => (rand() < p ? v() : undefined);

type Answer = { tool: string; arguments: Record<string, unknown>; result: unknown };
async function sharedTools(name: string) {
  const d = JSON.parse(await Deno.readTextFile(`${SHARED}${name}.json`));
  return (Array.isArray(d) ? d : d.tools) as { name: string }[];
}
async function write(server: string, source: string, tools: unknown[], answers: Answer[]) {
  await Deno.writeTextFile(
    `${OUT}${server}.json`,
    JSON.stringify({ server, source, heldOut: true, tools, answers }, null, 1) + "\n",
  );
  console.log(`${server}: ${tools.length} tools, ${answers.length} answers`);
}
const schema = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: "object",
  properties,
  required,
});

// GitHub MCP server: MinimalIssuesResponse, MinimalUser with details, MinimalResponse, a git ref.
{
  const logins = ["octocat", "hubot", "monalisa"];
  const issue = (n: number) =>
    clean({
      number: n,
      title: pick(["Crash on start", "Docs typo", "Add a flag"]),
      body: maybe(0.6, () => "Steps to reproduce…"),
      state: pick(["OPEN", "CLOSED"]),
      comments: maybe(0.5, () => 1 + int(9)),
      created_at: "2026-04-22T13:33:48Z",
      updated_at: "2026-05-22T13:33:48Z",
      user: { login: pick(logins) },
      labels: maybe(0.5, () => Array.from({ length: 1 + int(2) }, () => pick(["bug", "docs", "p1"]))),
      field_values: maybe(0.3, () => [{ field: "Priority", value: "High" }]),
    });
  const answers: Answer[] = [
    ...[2, 3, 0, 1, 3].map((count, i) => ({
      tool: "list_issues",
      arguments: { owner: "o", repo: "r", perPage: 3 },
      result: text({
        issues: Array.from({ length: count }, (_, j) => issue(100 + i * 3 + j)),
        totalCount: 9,
        pageInfo: clean({
          hasNextPage: i < 4,
          hasPreviousPage: i > 0,
          startCursor: count === 0 ? undefined : "Y3Vyc29yOnYyOpHOAAE=",
          endCursor: count === 0 ? undefined : "Y3Vyc29yOnYyOpHOAAI=",
        }),
      }),
    })),
    ...[0, 1, 2].map((i) => ({
      tool: "get_me",
      arguments: {},
      result: text({
        login: logins[i],
        id: 583231 + i,
        profile_url: `https://github.com/${logins[i]}`,
        avatar_url: `https://avatars.githubusercontent.com/u/${583231 + i}?v=4`,
        details: clean({
          name: i === 2 ? undefined : "The Octocat",
          company: i === 0 ? "@github" : undefined,
          blog: i === 1 ? undefined : "https://github.blog",
          location: i === 0 ? "San Francisco" : undefined,
          email: i === 1 ? "octo@example.com" : undefined,
          hireable: i === 1 ? true : undefined,
          bio: i === 2 ? "Hi" : undefined,
          twitter_username: i === 0 ? "github" : undefined,
          public_repos: 8 + i,
          public_gists: i === 2 ? undefined : 8,
          followers: 20 + i,
          following: i === 0 ? undefined : 9,
          created_at: "2011-01-25T18:44:36Z",
          updated_at: "2026-11-01T10:00:00Z",
        }),
      }),
    })),
    ...[0, 1, 2].map((i) => ({
      tool: "issue_write",
      arguments: { method: i ? "update" : "create", owner: "o", repo: "r", title: "t" },
      result: text({ id: `${3_000_000 + i}`, url: `https://github.com/o/r/issues/${200 + i}` }),
    })),
    ...[0, 1].map((i) => ({
      tool: "push_files",
      arguments: { owner: "o", repo: "r", branch: "main", message: "m", files: [] },
      result: text({
        ref: "refs/heads/main",
        url: "https://api.github.com/repos/o/r/git/refs/heads/main",
        object: { type: "commit", sha: `${hex(39)}${i}`, url: "https://api.github.com/repos/o/r/git/commits/x" },
        node_id: `REF_kwDOA${i}`,
      }),
    })),
  ];
  await write(
    "github",
    "tools: ../shared/cases/tools/github.json; answers: shaped after the GitHub MCP server's minimal types (Go structs, empty fields left out) over the GitHub API; held out",
    await sharedTools("github"),
    answers,
  );
}

// Slack: Web API responses (conversations.list, conversations.history, chat.postMessage, users.list…).
{
  const tools = JSON.parse(await Deno.readTextFile(`${OUT}tools/slack.json`)).tools;
  const topic = () => ({ value: pick(["", "Company-wide announcements"]), creator: pick(["", "U012AB3CD"]), last_set: int(2) ? 0 : 1449709364 });
  const channel = (name: string) => ({
    id: `C0${hex(8).toUpperCase()}`,
    name,
    is_channel: true,
    is_group: false,
    is_im: false,
    is_mpim: false,
    is_private: false,
    created: 1449252889,
    is_archived: false,
    is_general: name === "general",
    unlinked: 0,
    name_normalized: name,
    is_shared: false,
    is_org_shared: false,
    is_pending_ext_shared: false,
    pending_shared: [],
    context_team_id: "T012AB3C4",
    updated: 1678229664302,
    parent_conversation: null,
    creator: "U012A3CDE",
    is_ext_shared: false,
    shared_team_ids: ["T012AB3C4"],
    pending_connected_team_ids: [],
    is_member: rand() < 0.7,
    topic: topic(),
    purpose: topic(),
    previous_names: rand() < 0.3 ? ["old-name"] : [],
    num_members: int(40),
  });
  const message = (kind: "user" | "bot" | "join" | "thread") => {
    const ts = `16${int(99999999)}.00${int(9999)}`;
    if (kind === "join") return { type: "message", subtype: "channel_join", ts, user: "U061F7AUR", text: "<@U061F7AUR> has joined the channel" };
    if (kind === "bot") {
      return {
        type: "message",
        subtype: "bot_message",
        text: "Deploy finished",
        ts,
        bot_id: "B0123ABC",
        username: "deploybot",
        ...(rand() < 0.5 ? { attachments: [{ id: 1, color: "36a64f", fallback: "ok", text: "all green" }] } : {}),
      };
    }
    return clean({
      client_msg_id: uuid(),
      type: "message",
      text: "Hello world",
      user: "U012AB3CDE",
      ts,
      team: "T012AB3C4",
      blocks: [{ type: "rich_text", block_id: "Xk9", elements: [{ type: "rich_text_section", elements: [{ type: "text", text: "Hello world" }] }] }],
      thread_ts: kind === "thread" ? ts : undefined,
      reply_count: kind === "thread" ? 2 : undefined,
      reply_users_count: kind === "thread" ? 1 : undefined,
      latest_reply: kind === "thread" ? ts : undefined,
      reply_users: kind === "thread" ? ["U061F7AUR"] : undefined,
      is_locked: kind === "thread" ? false : undefined,
      subscribed: kind === "thread" ? true : undefined,
      reactions: maybe(0.3, () => [{ name: "thumbsup", users: ["U061F7AUR"], count: 1 }]),
      edited: maybe(0.2, () => ({ user: "U012AB3CDE", ts })),
    });
  };
  const kinds = [["user", "user", "thread"], ["user", "join", "bot", "user"], [], ["bot"], ["thread", "user"]] as const;
  const profile = (bot: boolean, deleted: boolean) =>
    clean({
      title: deleted ? undefined : pick(["", "Engineer"]),
      phone: deleted ? undefined : "",
      skype: deleted ? undefined : "",
      real_name: "Egon Spengler",
      real_name_normalized: "Egon Spengler",
      display_name: pick(["", "spengler"]),
      display_name_normalized: "spengler",
      fields: deleted || bot ? null : rand() < 0.5 ? null : {},
      status_text: "",
      status_emoji: "",
      status_emoji_display_info: [],
      status_expiration: 0,
      avatar_hash: "ge3b51ca72de",
      email: bot || deleted ? undefined : "spengler@ghostbusters.example.com",
      bot_id: bot ? "B0123ABC" : undefined,
      api_app_id: bot ? "A0123ABC" : undefined,
      always_active: bot ? true : undefined,
      image_24: "https://.../img_24.jpg",
      image_48: "https://.../img_48.jpg",
      image_72: "https://.../img_72.jpg",
      image_original: bot || deleted ? undefined : "https://.../img_original.jpg",
      is_custom_image: bot || deleted ? undefined : true,
      first_name: deleted ? undefined : "Egon",
      last_name: deleted ? undefined : "Spengler",
      team: "T012AB3C4",
    });
  const member = (bot: boolean, deleted: boolean) =>
    clean({
      id: `U0${hex(8).toUpperCase()}`,
      team_id: "T012AB3C4",
      name: "spengler",
      deleted,
      color: deleted ? undefined : "9f69e7",
      real_name: "Egon Spengler",
      tz: deleted ? undefined : "America/Los_Angeles",
      tz_label: deleted ? undefined : "Pacific Standard Time",
      tz_offset: deleted ? undefined : -28800,
      profile: profile(bot, deleted),
      is_admin: deleted ? undefined : false,
      is_owner: deleted ? undefined : false,
      is_primary_owner: deleted ? undefined : false,
      is_restricted: deleted ? undefined : false,
      is_ultra_restricted: deleted ? undefined : false,
      is_bot: bot,
      is_app_user: false,
      updated: 1502138686,
      is_email_confirmed: bot ? undefined : true,
      who_can_share_contact_card: "EVERYONE",
    });
  const post = (thread: boolean) => ({
    ok: true,
    channel: "C123ABC456",
    ts: "1503435956.000247",
    message: clean({
      text: "Here's a message for you",
      username: "ecto1",
      bot_id: "B123ABC456",
      attachments: [{ text: "This is an attachment", id: 1, fallback: "This is an attachment's fallback" }],
      type: "message",
      subtype: "bot_message",
      ts: "1503435956.000247",
      thread_ts: thread ? "1503435900.000100" : undefined,
      parent_user_id: thread ? "U012AB3CDE" : undefined,
    }),
  });
  const next = (more: boolean) => ({ next_cursor: more ? "dXNlcjpVMEc5V0ZYTlo=" : "" });
  const answers: Answer[] = [
    ...[["general", "random"], ["design"], []].map((names, i) => ({
      tool: "slack_list_channels",
      arguments: { limit: 100 },
      result: text({ ok: true, channels: names.map(channel), response_metadata: next(i === 0) }),
    })),
    ...[0, 1].map((i) => ({ tool: "slack_post_message", arguments: { channel_id: "C1", text: "hi" }, result: text(post(i === 1)) })),
    ...[0, 1].map(() => ({ tool: "slack_reply_to_thread", arguments: { channel_id: "C1", thread_ts: "1", text: "hi" }, result: text(post(true)) })),
    ...[0, 1].map(() => ({ tool: "slack_add_reaction", arguments: { channel_id: "C1", timestamp: "1", reaction: "tada" }, result: text({ ok: true }) })),
    ...kinds.map((ks, i) => ({
      tool: "slack_get_channel_history",
      arguments: { channel_id: "C1", limit: 10 },
      result: text(clean({
        ok: true,
        messages: ks.map((k) => message(k)),
        has_more: i === 0,
        pin_count: 0,
        channel_actions_ts: null,
        channel_actions_count: 0,
        response_metadata: i === 0 ? next(true) : undefined,
      })),
    })),
    ...[["thread", "user"], ["thread"], ["thread", "user", "bot"]].map((ks) => ({
      tool: "slack_get_thread_replies",
      arguments: { channel_id: "C1", thread_ts: "1" },
      result: text({ ok: true, messages: ks.map((k) => message(k as "user")), has_more: false }),
    })),
    ...[[[false, false], [true, false]], [[false, true]], [[false, false], [false, false], [true, false]]].map((ms, i) => ({
      tool: "slack_get_users",
      arguments: { limit: 100 },
      result: text({ ok: true, members: ms.map(([b, d]) => member(b!, d!)), cache_ts: 1498777272, response_metadata: next(i === 0) }),
    })),
    ...[[false, false], [true, false], [false, false]].map(([b, d]) => ({
      tool: "slack_get_user_profile",
      arguments: { user_id: "U1" },
      result: text({ ok: true, profile: profile(b!, d!) }),
    })),
  ];
  await write(
    "slack",
    "tools: @modelcontextprotocol/server-slack 2025.4.25 (tools/slack.json); answers: shaped after the Slack Web API method responses it passes through (conversations.list, conversations.history, conversations.replies, chat.postMessage, reactions.add, users.list, users.profile.get); held out",
    tools,
    answers,
  );
}

// Stripe: API objects (Customer, PaymentIntent, Invoice, Balance, Refund) and lists of them.
{
  const tool = (name: string, description: string, properties: Record<string, unknown> = {}) => ({
    name,
    description,
    inputSchema: schema(properties),
  });
  const str = { type: "string" };
  const num = { type: "number" };
  const tools = [
    tool("list_customers", "List customers.", { limit: num, email: str }),
    tool("create_customer", "Create a customer.", { name: str, email: str }),
    tool("list_payment_intents", "List payment intents.", { customer: str, limit: num }),
    tool("list_invoices", "List invoices.", { customer: str, limit: num }),
    tool("retrieve_balance", "Retrieve the balance."),
    tool("create_refund", "Refund a payment intent.", { payment_intent: str, amount: num }),
  ];
  const address = () => ({ city: "San Francisco", country: "US", line1: "510 Townsend St", line2: rand() < 0.5 ? null : "Suite 1", postal_code: "94103", state: "CA" });
  const customer = (i: number) => ({
    id: `cus_${hex(14)}`,
    object: "customer",
    address: i % 2 ? address() : null,
    balance: i % 3 ? 0 : -500,
    created: 1680893993 + i,
    currency: i % 2 ? "usd" : null,
    default_source: null,
    delinquent: false,
    description: i % 3 === 1 ? "VIP" : null,
    discount: null,
    email: i % 4 === 3 ? null : "jenny.rosen@example.com",
    invoice_prefix: hex(8).toUpperCase(),
    invoice_settings: { custom_fields: null, default_payment_method: i % 2 ? `pm_${hex(10)}` : null, footer: null, rendering_options: null },
    livemode: false,
    metadata: i % 2 ? { order_id: "6735", plan: "pro" } : {},
    name: "Jenny Rosen",
    next_invoice_sequence: 1 + i,
    phone: null,
    preferred_locales: i % 2 ? ["en"] : [],
    shipping: i % 3 === 2 ? { address: address(), name: "Jenny Rosen", phone: null } : null,
    tax_exempt: "none",
    test_clock: null,
  });
  const list = (url: string, data: unknown[], more: boolean) => ({ object: "list", url, has_more: more, data });
  const intent = (i: number) => ({
    id: `pi_${hex(14)}`,
    object: "payment_intent",
    amount: 2000 + i * 100,
    amount_capturable: 0,
    amount_details: { tip: {} },
    amount_received: i % 2 ? 0 : 2000 + i * 100,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: i % 3 ? { enabled: true } : null,
    canceled_at: i % 4 === 3 ? 1680900000 : null,
    cancellation_reason: i % 4 === 3 ? "requested_by_customer" : null,
    capture_method: "automatic",
    client_secret: `pi_${hex(10)}_secret_${hex(10)}`,
    confirmation_method: "automatic",
    created: 1680800504,
    currency: "usd",
    customer: i % 2 ? `cus_${hex(14)}` : null,
    description: null,
    last_payment_error: i % 4 === 2 ? { code: "card_declined", decline_code: "insufficient_funds", message: "Your card has insufficient funds.", type: "card_error" } : null,
    latest_charge: i % 2 ? null : `ch_${hex(14)}`,
    livemode: false,
    metadata: {},
    next_action: null,
    on_behalf_of: null,
    payment_method: i % 2 ? null : `pm_${hex(14)}`,
    payment_method_options: { card: { installments: null, mandate_options: null, network: null, request_three_d_secure: "automatic" } },
    payment_method_types: ["card"],
    processing: null,
    receipt_email: null,
    review: null,
    setup_future_usage: null,
    shipping: null,
    source: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: pick(["succeeded", "requires_payment_method", "canceled"]),
    transfer_data: null,
    transfer_group: null,
  });
  const invoice = (i: number) => ({
    id: `in_${hex(14)}`,
    object: "invoice",
    account_country: "US",
    account_name: "Stripe Docs",
    amount_due: i % 2 ? 0 : 1500,
    amount_paid: i % 2 ? 1500 : 0,
    amount_remaining: i % 2 ? 0 : 1500,
    attempt_count: i % 2,
    attempted: i % 2 === 1,
    auto_advance: i % 2 === 0,
    billing_reason: "manual",
    collection_method: "charge_automatically",
    created: 1680644467,
    currency: "usd",
    customer: `cus_${hex(14)}`,
    customer_email: i % 3 ? "jennyrosen@example.com" : null,
    customer_name: "Jenny Rosen",
    description: null,
    due_date: null,
    hosted_invoice_url: i % 2 ? "https://invoice.stripe.com/i/x" : null,
    invoice_pdf: i % 2 ? "https://pay.stripe.com/invoice/x/pdf" : null,
    lines: list("/v1/invoices/in_x/lines", i % 2 ? [{ id: `il_${hex(10)}`, object: "line_item", amount: 1500, currency: "usd", description: "Pro plan", quantity: 1 }] : [], false),
    livemode: false,
    metadata: {},
    number: i % 2 ? `${hex(8).toUpperCase()}-0001` : null,
    paid: i % 2 === 1,
    period_end: 1680644467,
    period_start: 1680644467,
    status: i % 2 ? "paid" : "draft",
    subtotal: 1500,
    total: 1500,
  });
  const balanceAmount = (n: number) => ({ amount: n, currency: "usd", source_types: { card: n } });
  const answers: Answer[] = [
    ...[[0, 1], [], [2, 3, 4]].map((ids, i) => ({
      tool: "list_customers",
      arguments: { limit: 3 },
      result: text(list("/v1/customers", ids.map(customer), i === 0)),
    })),
    ...[5, 6, 3].map((i) => ({ tool: "create_customer", arguments: { name: "Jenny Rosen" }, result: text(customer(i)) })),
    ...[[0], [1, 2, 3], []].map((ids, i) => ({
      tool: "list_payment_intents",
      arguments: { limit: 3 },
      result: text(list("/v1/payment_intents", ids.map(intent), i === 1)),
    })),
    ...[[0, 1], [2]].map((ids) => ({ tool: "list_invoices", arguments: { limit: 3 }, result: text(list("/v1/invoices", ids.map(invoice), false)) })),
    ...[0, 1, 2].map((i) => ({
      tool: "retrieve_balance",
      arguments: {},
      result: text(clean({
        object: "balance",
        available: [balanceAmount(i * 1000)],
        connect_reserved: i === 1 ? [balanceAmount(0)] : undefined,
        instant_available: i === 2 ? [balanceAmount(500)] : undefined,
        livemode: false,
        pending: i === 0 ? [] : [balanceAmount(200)],
      })),
    })),
    ...[0, 1].map((i) => ({
      tool: "create_refund",
      arguments: { payment_intent: "pi_x" },
      result: text({
        id: `re_${hex(14)}`,
        object: "refund",
        amount: 1000,
        balance_transaction: i ? null : `txn_${hex(14)}`,
        charge: `ch_${hex(14)}`,
        created: 1692942318,
        currency: "usd",
        destination_details: { card: { reference: "123456789012", reference_status: "available", reference_type: "acquirer_reference_number", type: "refund" }, type: "card" },
        metadata: {},
        payment_intent: `pi_${hex(14)}`,
        reason: i ? "requested_by_customer" : null,
        receipt_number: null,
        source_transfer_reversal: null,
        status: i ? "pending" : "succeeded",
        transfer_reversal: null,
      }),
    })),
  ];
  await write(
    "stripe",
    "tools: written after the Stripe MCP server's tool names; answers: shaped after the Stripe API reference objects (Customer, PaymentIntent, Invoice, Balance, Refund, list objects); held out",
    tools,
    answers,
  );
}

// Notion: search results (pages and data sources), users, appended blocks, a page update.
{
  const user = () => ({ object: "user", id: uuid() });
  const richText = (s: string) => ({
    type: "text",
    text: { content: s, link: null },
    annotations: { bold: false, italic: false, strikethrough: false, underline: false, code: false, color: "default" },
    plain_text: s,
    href: null,
  });
  const parents = [
    () => ({ type: "database_id", database_id: uuid() }),
    () => ({ type: "page_id", page_id: uuid() }),
    () => ({ type: "workspace", workspace: true }),
  ];
  const icons = [
    () => null,
    () => ({ type: "emoji", emoji: "🐞" }),
    () => ({ type: "external", external: { url: "https://example.com/icon.png" } }),
  ];
  const page = (i: number) => ({
    object: "page",
    id: uuid(),
    created_time: "2022-10-24T22:54:00.000Z",
    last_edited_time: "2023-03-08T18:25:00.000Z",
    created_by: user(),
    last_edited_by: user(),
    cover: i % 3 === 2 ? { type: "external", external: { url: "https://example.com/cover.png" } } : null,
    icon: icons[i % 3]!(),
    parent: parents[i % 3]!(),
    archived: false,
    in_trash: false,
    properties: i % 3 === 0
      ? {
        "Due date": { id: "M%3BBw", type: "date", date: i % 2 ? null : { start: "2023-02-23", end: null, time_zone: null } },
        Status: { id: "Z%3ClH", type: "status", status: { id: uuid(), name: "Not started", color: "default" } },
        Title: { id: "title", type: "title", title: [richText("Bug bash")] },
      }
      : { title: { id: "title", type: "title", title: [richText("Meeting notes")] } },
    url: `https://www.notion.so/${hex(32)}`,
    public_url: null,
  });
  const users = (kinds: ("person" | "bot")[]) => ({
    object: "list",
    results: kinds.map((k) =>
      k === "person"
        ? { object: "user", id: uuid(), name: "Avo Cado", avatar_url: rand() < 0.5 ? null : "https://secure.notion-static.com/x.png", type: "person", person: { email: "avo@example.org" } }
        : { object: "user", id: uuid(), name: "Doug Engelbot", avatar_url: null, type: "bot", bot: { owner: { type: "workspace", workspace: true }, workspace_name: "Acme" } }
    ),
    next_cursor: null,
    has_more: false,
    type: "user",
    user: {},
  });
  const block = (kind: "paragraph" | "heading_2" | "to_do") => ({
    object: "block",
    id: uuid(),
    parent: { type: "page_id", page_id: uuid() },
    created_time: "2023-03-08T18:25:00.000Z",
    last_edited_time: "2023-03-08T18:25:00.000Z",
    created_by: user(),
    last_edited_by: user(),
    has_children: false,
    archived: false,
    in_trash: false,
    type: kind,
    [kind]: kind === "to_do"
      ? { rich_text: [richText("Ship it")], checked: false, color: "default" }
      : kind === "heading_2"
      ? { rich_text: [richText("Plan")], is_toggleable: false, color: "default" }
      : { rich_text: [richText("Lacinato kale")], color: "default" },
  });
  const blocks = (kinds: ("paragraph" | "heading_2" | "to_do")[]) => ({
    object: "list",
    results: kinds.map(block),
    next_cursor: null,
    has_more: false,
    type: "block",
    block: {},
  });
  const answers: Answer[] = [
    ...[[0], [1, 2], [], [3, 4, 5]].map((ids, i) => ({
      tool: "API-post-search",
      arguments: { query: "notes", page_size: 3 },
      result: text({ object: "list", results: ids.map(page), next_cursor: i === 3 ? uuid() : null, has_more: i === 3, type: "page_or_data_source", page_or_data_source: {} }),
    })),
    ...[["person"], ["person", "bot"], ["bot", "person", "person"]].map((k) => ({
      tool: "API-get-users",
      arguments: {},
      result: text(users(k as ("person" | "bot")[])),
    })),
    ...[["paragraph"], ["heading_2", "paragraph"], ["to_do"]].map((k) => ({
      tool: "API-patch-block-children",
      arguments: { block_id: "b", children: [] },
      result: text(blocks(k as ("paragraph")[])),
    })),
    ...[0, 1, 2].map((i) => ({ tool: "API-update-page-markdown", arguments: { page_id: "p", type: "replace_content" }, result: text(page(i)) })),
  ];
  await write(
    "notion",
    "tools: ../shared/cases/tools/notion.json; answers: shaped after the Notion API reference objects (page, parent, user, block, list); held out",
    await sharedTools("notion"),
    answers,
  );
}

// Jira: REST issue objects and search results, the way Atlassian MCP servers pass them through.
{
  const str = { type: "string" };
  const tools = [
    { name: "jira_get_issue", description: "Get a Jira issue by key.", inputSchema: schema({ issue_key: str, fields: str }, ["issue_key"]) },
    { name: "jira_search", description: "Search Jira issues with JQL.", inputSchema: schema({ jql: str, limit: { type: "number" } }, ["jql"]) },
  ];
  const avatars = () => ({ "48x48": "https://a/48", "24x24": "https://a/24", "16x16": "https://a/16", "32x32": "https://a/32" });
  const jiraUser = () => ({ self: "https://your-domain.atlassian.net/rest/api/2/user?accountId=5b10a2844c20165700ede21g", accountId: "5b10a2844c20165700ede21g", emailAddress: rand() < 0.5 ? undefined : "mia@example.com", avatarUrls: avatars(), displayName: "Mia Krystof", active: true, timeZone: "Australia/Sydney", accountType: "atlassian" });
  const issue = (i: number) => ({
    expand: "renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations",
    id: `${10000 + i}`,
    self: `https://your-domain.atlassian.net/rest/api/2/issue/${10000 + i}`,
    key: `ED-${i}`,
    fields: {
      summary: "Main order flow broken",
      status: { self: "https://s", description: "", iconUrl: "https://i", name: pick(["To Do", "In Progress", "Done"]), id: "10000", statusCategory: { self: "https://c", id: 2, key: "new", colorName: "blue-gray", name: "To Do" } },
      issuetype: { self: "https://t", id: "10001", description: "A task.", iconUrl: "https://i", name: "Task", subtask: false, avatarId: 10318, hierarchyLevel: 0 },
      project: { self: "https://p", id: "10000", key: "ED", name: "Edison", projectTypeKey: "software", simplified: false, avatarUrls: avatars() },
      priority: i % 4 === 3 ? null : { self: "https://pr", iconUrl: "https://i", name: "Medium", id: "3" },
      assignee: i % 2 ? null : jiraUser(),
      reporter: jiraUser(),
      creator: jiraUser(),
      labels: i % 3 ? [] : ["frontend"],
      components: i % 3 === 1 ? [{ self: "https://co", id: "10000", name: "Web" }] : [],
      fixVersions: [],
      description: i % 2 ? null : "Order entry fails when selecting supplier.",
      created: "2026-01-02T10:00:00.000+0000",
      updated: "2026-02-02T10:00:00.000+0000",
      duedate: i % 3 === 2 ? "2026-03-01" : null,
      resolution: i % 3 === 2 ? { self: "https://r", id: "10000", description: "Work has been done", name: "Done" } : null,
      resolutiondate: i % 3 === 2 ? "2026-02-03T10:00:00.000+0000" : null,
      customfield_10016: i % 2 ? null : 5,
      customfield_10020: i % 3 ? null : [{ id: 1, name: "Sprint 1", state: "active", boardId: 1, startDate: "2026-01-01T00:00:00.000Z", endDate: "2026-01-15T00:00:00.000Z" }],
      timetracking: i % 2 ? {} : { originalEstimate: "1d", remainingEstimate: "4h", timeSpent: "4h", originalEstimateSeconds: 28800, remainingEstimateSeconds: 14400, timeSpentSeconds: 14400 },
      watches: { self: "https://w", watchCount: 1 + i, isWatching: false },
    },
  });
  const answers: Answer[] = [
    ...[0, 1, 2, 3].map((i) => ({ tool: "jira_get_issue", arguments: { issue_key: `ED-${i}` }, result: text(JSON.parse(JSON.stringify(issue(i)))) })),
    ...[[0, 1], [], [2, 3, 4]].map((ids, i) => ({
      tool: "jira_search",
      arguments: { jql: "project = ED" },
      result: text(JSON.parse(JSON.stringify({ expand: "schema,names", startAt: 0, maxResults: 50, total: [2, 0, 3][i], issues: ids.map(issue) }))),
    })),
  ];
  await write(
    "jira",
    "tools: written after Atlassian MCP servers' tool names; answers: shaped after the Jira Cloud REST API v2 issue and search objects; held out",
    tools,
    answers,
  );
}

// mcp-server-time: its two tools' JSON answers.
{
  const answers: Answer[] = [
    ...["Europe/Warsaw", "Asia/Tokyo", "America/New_York"].map((tz, i) => ({
      tool: "get_current_time",
      arguments: { timezone: tz },
      result: text({ timezone: tz, datetime: "2026-12-01T13:00:00+01:00", day_of_week: pick(["Tuesday", "Wednesday"]), is_dst: i === 2 }),
    })),
    ...[0, 1].map((i) => ({
      tool: "convert_time",
      arguments: { source_timezone: "America/New_York", time: "16:30", target_timezone: "Asia/Tokyo" },
      result: text({
        source: { timezone: "America/New_York", datetime: "2026-12-01T16:30:00-05:00", day_of_week: "Tuesday", is_dst: false },
        target: { timezone: "Asia/Tokyo", datetime: "2026-12-02T06:30:00+09:00", day_of_week: "Wednesday", is_dst: false },
        time_difference: i ? "+5.75h" : "+14.0h",
      }),
    })),
  ];
  await write(
    "time",
    "tools: ../shared/cases/tools/time.json; answers: shaped after mcp-server-time's documented answers (TimeResult, TimeConversionResult); held out",
    await sharedTools("time"),
    answers,
  );
}
