declare const github: {
  projects_write(params: {
    body?: string;
    field_name?: string;
    filter?: string | null;
    issue_number?: number;
    item_id?: number;
    item_owner?: string;
    item_repo?: string;
    item_type?: "issue" | "pull_request";
    items?: ({
      node_id: string;
    } | {
      item_id: number;
    } | {
      issue_number: number;
      item_owner: string;
      item_repo: string;
    })[];
    iteration_duration?: number;
    iterations?: {
      duration: number;
      start_date: string;
      title: string;
    }[];
    layout?: "table" | "board" | "roadmap";
    method: "add_project_item" | "update_project_item" | "update_project_items" | "delete_project_item" | "create_project_status_update" | "create_project_view" | "update_project_view" | "delete_project_view" | "create_project" | "create_iteration_field";
    name?: string;
    owner: string;
    owner_type?: "user" | "org";
    project_number?: number;
    pull_request_number?: number;
    start_date?: string;
    status?: "INACTIVE" | "ON_TRACK" | "AT_RISK" | "OFF_TRACK" | "COMPLETE";
    target_date?: string;
    title?: string;
    updated_field?: {
      id: number;
      value: unknown;
    } | {
      name: string;
      value: unknown;
    };
    view_id?: string;
    visible_field_names?: string[];
    visible_fields?: string[];
  }): Promise<unknown>;
  set_issue_fields(params: {
    fields: {
      confidence?: "LOW" | "MEDIUM" | "HIGH";
      date_value?: string;
      "delete"?: boolean;
      field_id: string;
      is_suggestion?: boolean;
      number_value?: number;
      rationale?: string;
      single_select_option_id?: string;
      text_value?: string;
    }[];
    issue_number: number;
    owner: string;
    repo: string;
  }): Promise<unknown>;
  list_issues(params: {
    after?: string;
    direction?: "ASC" | "DESC";
    field_filters?: {
      field_name: string;
      value: string;
    }[];
    fields?: ("number" | "title" | "body" | "state" | "user" | "labels" | "assignees" | "comments" | "created_at" | "updated_at" | "field_values")[];
    labels?: string[];
    orderBy?: "CREATED_AT" | "UPDATED_AT" | "COMMENTS";
    owner: string;
    perPage?: number;
    repo: string;
    since?: string;
    state?: "OPEN" | "CLOSED";
  }): Promise<unknown>;
  issue_write(params: {
    assignees?: string[];
    body?: string;
    duplicate_of?: number;
    issue_fields?: {
      "delete"?: boolean;
      field_name: string;
      field_option_name?: string;
      value?: string | number | boolean;
    }[];
    issue_number?: number;
    labels?: string[];
    method: "create" | "update";
    milestone?: number;
    owner: string;
    repo: string;
    state?: "open" | "closed";
    state_reason?: "completed" | "not_planned" | "duplicate";
    title?: string;
    type?: string | null;
  }): Promise<unknown>;
  push_files(params: {
    branch: string;
    files: {
      content: string;
      path: string;
    }[];
    message: string;
    owner: string;
    repo: string;
  }): Promise<unknown>;
  get_me(): Promise<unknown>;
  ui_get(params: {
    method: "labels" | "assignees" | "milestones" | "issue_types" | "branches" | "issue_fields" | "reviewers";
    owner: string;
    repo?: string;
  }): Promise<unknown>;
};
