pub fn legacy() {}
