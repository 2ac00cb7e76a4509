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
  /**
   * Notion | Search by title
   * Error Responses:
   * 400: Bad request
   */
  "API-post-search"(params?: {
    /** The text that the API compares page and database titles against. */
    query?: string;
    sort?: {
      /** The direction to sort. Possible values include `ascending` and `descending`. */
      direction?: string;
      /** The name of the timestamp to sort against. Possible values include `last_edited_time`. */
      timestamp?: string;
    } | string;
    filter?: {
      /** The value of the property to filter the results by.  Possible values for object type include `page` or `data_source`.  **Limitation**: Currently the only filter allowed is `object` which will filter by type of object (either `page` or `data_source`) */
      value?: "page" | "data_source";
      /** The name of the property to filter by. Currently the only property you can filter by is the object type.  Possible values include `object`.   Limitation: Currently the only filter allowed is `object` which will filter by type of object (either `page` or `data_source`) */
      property?: string;
    } | string;
    /** A `cursor` value returned in a previous response that If supplied, limits the response to results starting after the `cursor`. If not supplied, then the first page of results is returned. Refer to [pagination](https://developers.notion.com/reference/intro#pagination) for more details. */
    start_cursor?: string;
    /** The number of items from the full list to include in the response. Maximum: `100`. */
    page_size?: number;
  }): Promise<unknown>;
  /** Alias for API-post-search. */
  API_post_search: (typeof notion)["API-post-search"];
  /**
   * Notion | Append block children
   * Error Responses:
   * 400: Bad request
   */
  "API-patch-block-children"(params: {
    /** Identifier for a [block](ref:block). Also accepts a [page](ref:page) ID. */
    block_id: string;
    /** Child content to append to a container block as an array of [block objects](ref:block) */
    children: (blockObjectRequest | string | Record<string, unknown>)[];
    /** The ID of the existing block that the new block should be appended after. */
    after?: string;
  }): Promise<unknown>;
  /** Alias for API-patch-block-children. */
  API_patch_block_children: (typeof notion)["API-patch-block-children"];
  /**
   * Notion | Update a page's content as Markdown
   * Error Responses:
   * 400: Bad request
   * 403: The integration lacks the read/update content capability required for this page.
   * 404: Page not found or not shared with the integration.
   * 409: Conflict (e.g. row limit exceeded).
   * 429: Rate limited.
   */
  "API-update-page-markdown"(params: {
    /** Identifier for a Notion page (or block) to read or update as markdown. */
    page_id: string;
    /** The kind of edit to apply. Prefer `replace_content` (overwrite the whole page) or `update_content` (targeted find-and-replace). `insert_content` and `replace_content_range` are deprecated. */
    type: "replace_content" | "update_content" | "insert_content" | "replace_content_range";
    replace_content?: {
      /** The complete new page content as enhanced Markdown. */
      new_str: string;
      /** Permit deletion of existing child pages/databases that are no longer present in the new content. */
      allow_deleting_content?: boolean;
    } | string;
    update_content?: {
      /** Up to 100 find-and-replace edits applied in order. */
      content_updates: {
        /** Exact existing Markdown text to find. */
        old_str: string;
        /** Replacement Markdown text. */
        new_str: string;
        /** Replace every occurrence of old_str instead of just the first (default false). */
        replace_all_matches?: boolean;
      }[];
      /** Permit deletion of existing child pages/databases removed by the edits. */
      allow_deleting_content?: boolean;
    } | string;
    insert_content?: {
      /** Enhanced Markdown to insert. */
      content: string;
      /** Ellipsis-format selection ("start text...end text") to insert after. Cannot be combined with position. */
      after?: string;
      /** Insert at the start or end of the page. Cannot be combined with after. */
      position?: {
        type?: "start" | "end";
      };
    } | string;
    replace_content_range?: {
      /** New Markdown content for the range. */
      content: string;
      /** Ellipsis-format selection ("start text...end text") identifying the range to replace. */
      content_range: string;
      /** Permit deletion of child pages/databases within the replaced range. */
      allow_deleting_content?: boolean;
    } | string;
  }): Promise<unknown>;
  /** Alias for API-update-page-markdown. */
  API_update_page_markdown: (typeof notion)["API-update-page-markdown"];
  /**
   * Notion | List all users
   * Error Responses:
   * 400: 400
   */
  "API-get-users"(params?: {
    /** If supplied, this endpoint will return a page of results starting after the cursor provided. If not supplied, this endpoint will return the first page of results. */
    start_cursor?: string;
    /** The number of items from the full list desired in the response. Maximum: 100 */
    page_size?: number;
  }): Promise<unknown>;
  /** Alias for API-get-users. */
  API_get_users: (typeof notion)["API-get-users"];
};
