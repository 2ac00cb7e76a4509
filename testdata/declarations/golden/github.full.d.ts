declare const github: {
  /** Create and manage GitHub Projects: create projects, add/update/delete items, bulk-update many items at once, manage views, create status updates, and add iteration fields. */
  projects_write(params: {
    /** The body of the status update (markdown). Used for 'create_project_status_update' method. */
    body?: string;
    /** The name of the iteration field (e.g. 'Sprint'). Required for 'create_iteration_field' method. */
    field_name?: string;
    /** Saved view filter; omit on update to preserve it, or pass null to clear it. */
    filter?: string | null;
    /** The issue number. Required for 'add_project_item' when item_type is 'issue'. Also accepted by 'update_project_item' to resolve the item by issue number (combine with item_owner and item_repo). */
    issue_number?: number;
    /** The project item ID. Required for 'delete_project_item'. For 'update_project_item', provide either item_id, or (item_owner + item_repo + issue_number) to resolve the item by issue. */
    item_id?: number;
    /** The owner (user or organization) of the repository containing the issue or pull request. Required for 'add_project_item' method. Also accepted by 'update_project_item' when resolving the item by issue number. */
    item_owner?: string;
    /** The name of the repository containing the issue or pull request. Required for 'add_project_item' method. Also accepted by 'update_project_item' when resolving the item by issue number. */
    item_repo?: string;
    /** The item's type, either issue or pull_request. Required for 'add_project_item' method. */
    item_type?: "issue" | "pull_request";
    /** The items to update with the top-level 'updated_field'. Required for 'update_project_items'; prefer it over calling 'update_project_item' in a loop. Each entry must match exactly one reference variant: 'node_id', numeric 'item_id', or 'item_owner' + 'item_repo' + 'issue_number'. Limit: 50 items per call. */
    items?: ({
      /** The project item's GraphQL node ID, as returned by 'list_project_items' or 'add_project_item'. */
      node_id: string;
    } | {
      /** The numeric project item ID. */
      item_id: number;
    } | {
      /** Issue number used to resolve the project item. */
      issue_number: number;
      /** Owner of the repository containing the issue. */
      item_owner: string;
      /** Repository containing the issue. */
      item_repo: string;
    })[];
    /** Duration in days for iterations of the field (e.g. 7 for weekly, 14 for bi-weekly). Required for 'create_iteration_field' method. */
    iteration_duration?: number;
    /** Custom iterations for 'create_iteration_field' method. Only set this when you need iterations with varying durations, breaks between them, or specific titles. Otherwise omit it: GitHub auto-creates three iterations of 'iteration_duration' days starting on 'start_date', which is the right choice for most cases. */
    iterations?: {
      /** Duration in days */
      duration: number;
      /** Start date in YYYY-MM-DD format */
      start_date: string;
      /** Iteration title (e.g. 'Sprint 1') */
      title: string;
    }[];
    /** View layout; required when creating a view. */
    layout?: "table" | "board" | "roadmap";
    /** The method to execute */
    method: "add_project_item" | "update_project_item" | "update_project_items" | "delete_project_item" | "create_project_status_update" | "create_project_view" | "update_project_view" | "delete_project_view" | "create_project" | "create_iteration_field";
    /** View name; required when creating a view. */
    name?: string;
    /** The project owner (user or organization login). The name is not case sensitive. */
    owner: string;
    /** Owner type (user or org). Required for 'create_project' method. If not provided for other methods, will be automatically detected. */
    owner_type?: "user" | "org";
    /** The project's number. Required for all methods except 'create_project'. */
    project_number?: number;
    /** The pull request number (use when item_type is 'pull_request' for 'add_project_item' method). Provide either issue_number or pull_request_number. */
    pull_request_number?: number;
    /** Start date in YYYY-MM-DD format. Used for 'create_project_status_update' and 'create_iteration_field' methods. */
    start_date?: string;
    /** The status of the project. Used for 'create_project_status_update' method. */
    status?: "INACTIVE" | "ON_TRACK" | "AT_RISK" | "OFF_TRACK" | "COMPLETE";
    /** The target date of the status update in YYYY-MM-DD format. Used for 'create_project_status_update' method. */
    target_date?: string;
    /** The project title. Required for 'create_project' method. */
    title?: string;
    /** The field/value to apply, using {"id": 123, "value": ...} or {"name": "Status", "value": ...}; null clears the field. Required for 'update_project_item' and 'update_project_items', where one top-level field/value applies to every item in a batch. For 'update_project_item' SINGLE_SELECT fields, the name form accepts option names; the ID form expects an option ID. */
    updated_field?: {
      /** The numeric project field ID. */
      id: number;
      /** The value to apply. Any JSON value is accepted; use null to clear the field. */
      value: unknown;
    } | {
      /** The project field name. Matching is case-insensitive. */
      name: string;
      /** The value to apply. Any JSON value is accepted; use null to clear the field. */
      value: unknown;
    };
    /** Project view node ID for update or delete; must belong to owner/project_number. */
    view_id?: string;
    /** Ordered project field names to show on create or replace on update; omit on update to preserve, or pass [] to reset. Mutually exclusive with visible_fields. Roadmap accepts only []. */
    visible_field_names?: string[];
    /** Ordered project field database IDs to show on create or replace on update; omit on update to preserve, or pass [] to reset. Mutually exclusive with visible_field_names. Roadmap accepts only []. */
    visible_fields?: string[];
  }): Promise<unknown>;
  /** Set issue field values for an issue. Fields are organization-level custom fields (text, number, date, or single select). Use this to create or update field values on an issue. */
  set_issue_fields(params: {
    /** Array of issue field values to set. Each element must have a 'field_id' (string, the GraphQL node ID of the field) and exactly one value field: 'text_value' for text fields, 'number_value' for number fields, 'date_value' (ISO 8601 date string) for date fields, or 'single_select_option_id' (the GraphQL node ID of the option) for single select fields. Set 'delete' to true to remove a field value. */
    fields: {
      /** How confident you are in this choice. Use 'HIGH' for clear signal or explicit user request, 'MEDIUM' for reasonable inference with some ambiguity, 'LOW' for best guess with limited signal. */
      confidence?: "LOW" | "MEDIUM" | "HIGH";
      /** The value to set for a date field (ISO 8601 date string) */
      date_value?: string;
      /** Set to true to delete this field value */
      "delete"?: boolean;
      /** The GraphQL node ID of the issue field */
      field_id: string;
      /** If true, this field value is sent to the API as a suggestion (suggest:true) rather than an applied value. Whether the value is applied or recorded as a proposal is determined by the API. */
      is_suggestion?: boolean;
      /** The value to set for a number field */
      number_value?: number;
      /** One concise sentence explaining what specifically about the issue led you to choose this field value. State the concrete signal (e.g. 'Reports a crash when saving' → high priority). */
      rationale?: string;
      /** The GraphQL node ID of the option to set for a single select field */
      single_select_option_id?: string;
      /** The value to set for a text field */
      text_value?: string;
    }[];
    /** The issue number to update */
    issue_number: number;
    /** Repository owner (username or organization) */
    owner: string;
    /** Repository name */
    repo: string;
  }): Promise<unknown>;
  /** List issues in a GitHub repository. For pagination, use the 'endCursor' from the previous response's 'pageInfo' in the 'after' parameter. */
  list_issues(params: {
    /** Cursor for pagination. Use the cursor from the previous response. */
    after?: string;
    /** Order direction. If provided, the 'orderBy' also needs to be provided. */
    direction?: "ASC" | "DESC";
    /** Filter by custom issue field values. Each entry takes a field_name and a value; the server looks up the field and coerces the value to its type (single-select option name, text, number, or YYYY-MM-DD date). */
    field_filters?: {
      /** Name of the custom field (e.g. "Priority"). Case-insensitive. */
      field_name: string;
      /** Value to filter on. For single-select fields, the option name (e.g. "P1"). For dates, YYYY-MM-DD. For numbers, the numeric value as a string. For text, the text value. */
      value: string;
    }[];
    /** Subset of fields to return for each issue. If omitted, all fields are returned. Use this to reduce response size when you only need specific fields; omitting 'body' and 'field_values' in particular drops the largest per-result data. */
    fields?: ("number" | "title" | "body" | "state" | "user" | "labels" | "assignees" | "comments" | "created_at" | "updated_at" | "field_values")[];
    /** Filter by labels */
    labels?: string[];
    /** Order issues by field. If provided, the 'direction' also needs to be provided. */
    orderBy?: "CREATED_AT" | "UPDATED_AT" | "COMMENTS";
    /** Repository owner */
    owner: string;
    /** Results per page for pagination (min 1, max 100) */
    perPage?: number;
    /** Repository name */
    repo: string;
    /** Filter by date (ISO 8601 timestamp) */
    since?: string;
    /** Filter by state, by default both open and closed issues are returned when not provided */
    state?: "OPEN" | "CLOSED";
  }): Promise<unknown>;
  /** Create a new or update an existing issue in a GitHub repository. */
  issue_write(params: {
    /** Usernames to assign to this issue */
    assignees?: string[];
    /** Issue body content */
    body?: string;
    /** Issue number that this issue is a duplicate of. Required when state_reason is 'duplicate'. */
    duplicate_of?: number;
    /** Issue field values to set or clear. Each item requires 'field_name' and exactly one of 'value', 'field_option_name', or 'delete: true'. */
    issue_fields?: {
      /** Set to true to clear this field's current value on the issue. When false or omitted, this property is ignored. Cannot be true when 'value' or 'field_option_name' is provided. */
      "delete"?: boolean;
      /** Issue field name (case-insensitive). Must match a field returned by list_issue_fields for this repository or its organization. */
      field_name: string;
      /** Option name for single-select fields. Validated against the field's options before the API call. Cannot be combined with 'value' or 'delete: true'. */
      field_option_name?: string;
      /** Value to set. Use for text, number, and date fields (date as YYYY-MM-DD). For single-select fields, prefer 'field_option_name' so the option is validated before the API call. Cannot be combined with 'field_option_name' or 'delete: true'. */
      value?: string | number | boolean;
    }[];
    /** Issue number to update */
    issue_number?: number;
    /** Labels to apply to this issue */
    labels?: string[];
    /**
     * Write operation to perform on a single issue.
     * Options are:
     * - 'create' - creates a new issue.
     * - 'update' - updates an existing issue.
     */
    method: "create" | "update";
    /** Milestone number */
    milestone?: number;
    /** Repository owner */
    owner: string;
    /** Repository name */
    repo: string;
    /** New state */
    state?: "open" | "closed";
    /** Reason for the state change. Ignored unless state is changed. */
    state_reason?: "completed" | "not_planned" | "duplicate";
    /** Issue title */
    title?: string;
    /** Type of this issue. For updates, pass null to remove the current type. Only use if issue types are enabled for this repository. Use list_issue_types to get valid type values for this repository or its owner organization. If the repository doesn't support issue types, omit this parameter. */
    type?: string | null;
  }): Promise<unknown>;
  /** Push multiple files to a GitHub repository in a single commit */
  push_files(params: {
    /** Branch to push to */
    branch: string;
    /** Array of file objects to push, each object with path (string) and content (string) */
    files: {
      /** file content */
      content: string;
      /** path to the file */
      path: string;
    }[];
    /** Commit message */
    message: string;
    /** Repository owner */
    owner: string;
    /** Repository name */
    repo: string;
  }): Promise<unknown>;
  /** Get details of the authenticated GitHub user. Use this when a request is about the user's own profile for GitHub. Or when information is missing to build other tool calls. */
  get_me(): Promise<unknown>;
  /** Fetch UI data for MCP Apps (labels, assignees, milestones, issue types, branches, issue fields, reviewers). */
  ui_get(params: {
    /** The type of data to fetch */
    method: "labels" | "assignees" | "milestones" | "issue_types" | "branches" | "issue_fields" | "reviewers";
    /** Repository owner (required for all methods) */
    owner: string;
    /** Repository name (required for labels, assignees, milestones, branches, issue fields, reviewers) */
    repo?: string;
  }): Promise<unknown>;
};
