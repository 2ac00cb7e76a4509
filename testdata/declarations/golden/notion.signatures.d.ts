type blockObjectRequest = paragraphBlockRequest | bulletedListItemBlockRequest;

type bulletedListItemBlockRequest = {
  bulleted_list_item?: {
    rich_text: richTextRequest[];
  };
  type?: "bulleted_list_item";
};

type paragraphBlockRequest = {
  paragraph?: {
    rich_text: richTextRequest[];
  };
  type?: "paragraph";
};

type richTextRequest = {
  text: {
    content: string;
    link?: Record<string, unknown> | null;
  };
  type?: "text";
};

declare const notion: {
  "API-post-search"(params?: {
    query?: string;
    sort?: {
      direction?: string;
      timestamp?: string;
    } | string;
    filter?: {
      value?: "page" | "data_source";
      property?: string;
    } | string;
    start_cursor?: string;
    page_size?: number;
  }): Promise<unknown>;
  API_post_search: (typeof notion)["API-post-search"];
  "API-patch-block-children"(params: {
    block_id: string;
    children: (blockObjectRequest | string | Record<string, unknown>)[];
    after?: string;
  }): Promise<unknown>;
  API_patch_block_children: (typeof notion)["API-patch-block-children"];
  "API-update-page-markdown"(params: {
    page_id: string;
    type: "replace_content" | "update_content" | "insert_content" | "replace_content_range";
    replace_content?: {
      new_str: string;
      allow_deleting_content?: boolean;
    } | string;
    update_content?: {
      content_updates: {
        old_str: string;
        new_str: string;
        replace_all_matches?: boolean;
      }[];
      allow_deleting_content?: boolean;
    } | string;
    insert_content?: {
      content: string;
      after?: string;
      position?: {
        type?: "start" | "end";
      };
    } | string;
    replace_content_range?: {
      content: string;
      content_range: string;
      allow_deleting_content?: boolean;
    } | string;
  }): Promise<unknown>;
  API_update_page_markdown: (typeof notion)["API-update-page-markdown"];
  "API-get-users"(params?: {
    start_cursor?: string;
    page_size?: number;
  }): Promise<unknown>;
  API_get_users: (typeof notion)["API-get-users"];
};
