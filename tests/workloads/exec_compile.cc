// A real C++ translation unit for tests/e2e/exec_compile.sh, which compiles it in a loop
// (`g++ -O2 -c`) under kiln record: the driver g++ forks and execs cc1plus and as, which
// live about a second each. Not run; what matters is that it takes the compiler a while:
// standard containers, algorithms and streams instantiated for a few types.
#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace inventory {

struct Item {
	std::string name;
	unsigned count;
	double price;
	bool operator<(const Item &o) const { return name < o.name; }
};

template <typename K, typename V>
std::map<K, std::vector<V>> group(const std::vector<V> &items, std::function<K(const V &)> key)
{
	std::map<K, std::vector<V>> out;
	for (const auto &it : items)
		out[key(it)].push_back(it);
	return out;
}

template <typename T>
std::string join(const std::vector<T> &v, const std::string &sep)
{
	std::ostringstream o;
	for (size_t i = 0; i < v.size(); i++)
		o << (i ? sep : "") << v[i];
	return o.str();
}

std::string report(std::vector<Item> items)
{
	std::sort(items.begin(), items.end());
	auto by_letter = group<char, Item>(items, [](const Item &i) { return i.name.empty() ? '?' : i.name[0]; });
	std::unordered_map<std::string, double> value;
	std::set<unsigned> counts;
	for (const auto &i : items) {
		value[i.name] += i.count * i.price;
		counts.insert(i.count);
	}
	std::vector<std::string> lines;
	for (const auto &[letter, group_items] : by_letter) {
		double total = std::accumulate(group_items.begin(), group_items.end(), 0.0,
					       [](double a, const Item &i) { return a + i.count * i.price; });
		std::ostringstream o;
		o << letter << ": " << group_items.size() << " items, " << total;
		lines.push_back(o.str());
	}
	std::vector<unsigned> cv(counts.begin(), counts.end());
	return join(lines, "\n") + "\ncounts: " + join(cv, ",") + "\n" + std::to_string(value.size());
}

} // namespace inventory

std::string inventory_report(const std::vector<std::string> &names)
{
	std::vector<inventory::Item> items;
	for (size_t i = 0; i < names.size(); i++)
		items.push_back({ names[i], unsigned(i % 7), 1.5 * double(i) });
	return inventory::report(items);
}
