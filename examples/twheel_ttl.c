// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_ttl - a key cache whose keys expire, built on twheel's kernel API
 *
 * The godis use of a timing wheel: every key carries a TTL; setting a key
 * that exists replaces its value and its TTL (twheel_mod()), and a key
 * whose TTL runs out is removed by its timer's callback, which frees it.
 *
 * Commands are written to /sys/kernel/debug/twheel_ttl/keys:
 *
 *   set NAME VALUE TTL_MS      add or replace a key
 *   del NAME                   remove a key before it expires
 *
 * and reading the file lists the keys: "NAME VALUE REMAINING_MS". Every
 * expiry is logged with its lateness.
 *
 * Locking: ttl_lock (a BH spinlock: callbacks run in softirq) protects the
 * table. A key in the table owns its timer; a callback that finds its key
 * re-armed (pending again) or already deleted does nothing, and the deleter
 * frees the key after twheel_cancel_sync().
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "twheel.h"

#define TTL_NAME_MAX	32
#define TTL_CMD_MAX	128

struct ttl_key {
	struct hlist_node	node;
	struct twheel_timer	timer;
	u64			value;
	char			name[TTL_NAME_MAX];
};

static DEFINE_HASHTABLE(ttl_table, 6);
static DEFINE_SPINLOCK(ttl_lock);
static struct dentry *ttl_dir;

static u32 ttl_hash(const char *name)
{
	return full_name_hash(NULL, name, strlen(name));
}

static struct ttl_key *ttl_find(const char *name)
{
	struct ttl_key *key;

	lockdep_assert_held(&ttl_lock);
	hash_for_each_possible(ttl_table, key, node, ttl_hash(name))
		if (!strcmp(key->name, name))
			return key;
	return NULL;
}

static void ttl_expire(struct twheel_timer *timer)
{
	struct ttl_key *key = container_of(timer, struct ttl_key, timer);
	s64 late = ktime_get() - twheel_fired_deadline(timer);

	spin_lock(&ttl_lock);
	/* Re-armed by a set, or deleted, while we waited for the lock. */
	if (twheel_pending(timer) || !hash_hashed(&key->node)) {
		spin_unlock(&ttl_lock);
		return;
	}
	hash_del(&key->node);
	spin_unlock(&ttl_lock);
	pr_info("expired %s late_us=%lld\n", key->name, div_s64(late, 1000));
	kfree(key);
}

static int ttl_set(const char *name, u64 value, u64 ttl_ms)
{
	struct ttl_key *key, *new;
	int ret;

	if (strlen(name) >= TTL_NAME_MAX)
		return -ENAMETOOLONG;
	if (ttl_ms > KTIME_MAX / NSEC_PER_MSEC)
		return -ERANGE;
	new = kzalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		return -ENOMEM;
	strscpy(new->name, name, sizeof(new->name));
	new->value = value;
	twheel_timer_init(&new->timer, ttl_expire, 0);

	spin_lock_bh(&ttl_lock);
	key = ttl_find(name);
	if (key) {
		/* Replace: a new value and a new TTL, in O(1). */
		ret = twheel_mod(&key->timer, ttl_ms * NSEC_PER_MSEC, TWHEEL_REL);
		if (ret >= 0)
			key->value = value;
	} else {
		hash_add(ttl_table, &new->node, ttl_hash(name));
		ret = twheel_add(&new->timer, ttl_ms * NSEC_PER_MSEC, TWHEEL_REL);
		if (ret)
			hash_del(&new->node);
		else
			new = NULL;
	}
	spin_unlock_bh(&ttl_lock);
	kfree(new);
	return ret < 0 ? ret : 0;
}

/* Remove the key @name, or any key if @name is NULL; the caller frees it. */
static struct ttl_key *ttl_unlink(const char *name)
{
	struct ttl_key *key = NULL;
	unsigned int bkt;

	spin_lock_bh(&ttl_lock);
	if (name)
		key = ttl_find(name);
	else
		hash_for_each(ttl_table, bkt, key, node)
			break;
	if (key)
		hash_del(&key->node);
	spin_unlock_bh(&ttl_lock);
	return key;
}

static void ttl_free(struct ttl_key *key)
{
	twheel_cancel_sync(&key->timer);
	kfree(key);
}

static int ttl_del(const char *name)
{
	struct ttl_key *key = ttl_unlink(name);

	if (!key)
		return -ENOENT;
	ttl_free(key);
	return 0;
}

static int ttl_command(char *cmd)
{
	char name[TTL_NAME_MAX];
	u64 value, ttl_ms;

	if (sscanf(cmd, "set %31s %llu %llu", name, &value, &ttl_ms) == 3)
		return ttl_set(name, value, ttl_ms);
	if (sscanf(cmd, "del %31s", name) == 1)
		return ttl_del(name);
	return -EINVAL;
}

static ssize_t ttl_write(struct file *file, const char __user *ubuf,
			 size_t len, loff_t *ppos)
{
	char cmd[TTL_CMD_MAX];
	int ret;

	if (len >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, len))
		return -EFAULT;
	cmd[len] = '\0';
	ret = ttl_command(strim(cmd));
	return ret ? ret : len;
}

static int ttl_show(struct seq_file *m, void *v)
{
	struct ttl_key *key;
	unsigned int bkt;

	spin_lock_bh(&ttl_lock);
	hash_for_each(ttl_table, bkt, key, node)
		seq_printf(m, "%s %llu %lld\n", key->name, key->value,
			   div_s64(max_t(s64, twheel_remaining(&key->timer), 0),
				   NSEC_PER_MSEC));
	spin_unlock_bh(&ttl_lock);
	return 0;
}

static int ttl_open(struct inode *inode, struct file *file)
{
	return single_open(file, ttl_show, NULL);
}

static const struct file_operations ttl_fops = {
	.owner		= THIS_MODULE,
	.open		= ttl_open,
	.read		= seq_read,
	.write		= ttl_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static int __init ttl_init(void)
{
	ttl_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("keys", 0600, ttl_dir, NULL, &ttl_fops);
	return 0;
}

static void __exit ttl_exit(void)
{
	struct ttl_key *key;

	debugfs_remove_recursive(ttl_dir);
	while ((key = ttl_unlink(NULL)))
		ttl_free(key);
	/*
	 * A callback that took its key off the table may still be running
	 * this module's code. twheel runs callbacks that do not sleep with
	 * bottom halves off, which an RCU grace period waits for.
	 */
	synchronize_rcu();
}

module_init(ttl_init);
module_exit(ttl_exit);

MODULE_AUTHOR("The twheel authors");
MODULE_DESCRIPTION("Example twheel client: a key cache with TTLs");
MODULE_LICENSE("GPL");
