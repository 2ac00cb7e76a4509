pub fn rooted() {}
